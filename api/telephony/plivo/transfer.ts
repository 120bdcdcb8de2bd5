// The XML Plivo fetches when the worker transfers a call ("Transfer a call", aleg_url,
// https://www.plivo.com/docs/voice/api/call/transfer-a-call): POST
// /api/v1/telephony/plivo/transfer/{session_id}?target=&expires=&sig= (the link the worker signed,
// common/carriers/plivo/transfer_link.ts). Answered only when Plivo's X-Plivo-Signature-V3 verifies (as on
// the answer webhook), the link's MAC verifies and has not expired (60 s: not one use only, since
// Plivo may retry the fetch), and the session is a live Plivo call (or one just ended
// `transferred`) whose CallUUID is the one Plivo is fetching for. The answer dials the target
// (`<Dial>` with `<Number>` for E.164 digits, `<User>` for a SIP URI:
// https://www.plivo.com/docs/voice/xml/the-dial-element).
import type { Context } from "hono";
import { ApiError } from "../../../common/http/errors.ts";
import { checkTransferLink } from "../../../common/carriers/plivo/transfer_link.ts";
import { sessionPhoneState } from "../../../db/sessions.ts";
import { logger } from "../../../common/log.ts";
import type { ApiDeps } from "../../context.ts";
import { xmlAnswer, xmlEscape } from "../admit.ts";
import { verifiedPlivoForm } from "./signature.ts";
import { loggedRefusals } from "../webhook_guard.ts";

const log = logger("telephony");

const E164 = /^\+[1-9][0-9]{6,14}$/;

export const plivoTransferXml = loggedRefusals("plivo", async (c: Context, deps: ApiDeps) => {
  const { plivo, params } = await verifiedPlivoForm(c, deps);

  const sessionId = c.req.param("session_id")!;
  const link = await checkTransferLink(plivo.authToken, sessionId, {
    target: c.req.query("target"),
    expires: c.req.query("expires"),
    sig: c.req.query("sig"),
  });
  if (!link.ok) throw new ApiError(403, "invalid_transfer_link", link.reason);
  const session = await sessionPhoneState(deps.sql, sessionId);
  const form = Object.fromEntries(params);
  // The worker ends the session as soon as Plivo accepts the transfer, which may be before Plivo
  // fetches this: a session ended `transferred` is still this call's.
  const live = session?.status === "active" ||
    (session?.status === "ended" && session.end_reason === "transferred");
  if (
    !live || session.metadata.phone_carrier !== "plivo" || !form.CallUUID ||
    session.metadata.phone_call_id !== form.CallUUID
  ) {
    throw new ApiError(409, "not_this_call", "The link is not for a live Plivo call with this id.");
  }
  // The worker signed a checked target; checked again so the markup never depends on that.
  const noun = E164.test(link.target)
    ? `<Number>${link.target.slice(1)}</Number>`
    : /^sips?:/.test(link.target)
    ? `<User>${xmlEscape(link.target)}</User>`
    : undefined;
  if (!noun) throw new ApiError(400, "invalid_target", "The target is not a number or SIP URI.");
  log.info("plivo transfer xml served", { session_id: sessionId });
  return xmlAnswer(c, `<Dial>${noun}</Dial>`);
});
