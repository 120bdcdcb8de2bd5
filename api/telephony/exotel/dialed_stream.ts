// The Voicebot applet's dynamic URL in the flow calls we place are connected to (exotel/dial.ts):
// GET /api/v1/telephony/exotel/dialed?CallSid=…&CustomField={session_id}, with the webhook secret
// (Basic or ?secret=) as on the inbound endpoint (stream_url.ts). Exotel expects JSON
// {"url": "wss://..."} ("Working with the Stream and Voicebot Applet",
// https://support.exotel.com/support/solutions/articles/3000108630). The session is the one the
// call was placed for (CustomField), and only while it is an open Exotel outbound session whose
// recorded call id is this CallSid and still waits for its stream: then its token is issued again
// as calls.dial minted it (same id, node, claims and expiry, so it is still spent once by the
// worker), rather than ever travelling through Exotel's REST API.
import type { Context } from "hono";
import { ApiError } from "../../../common/http/errors.ts";
import { logger } from "../../../common/log.ts";
import { outboundStreamGrant } from "../../../db/carrier_dial.ts";
import type { ApiDeps } from "../../context.ts";
import { notConfigured, streamUrlOf } from "../admit.ts";
import { sameSecret } from "../signatures.ts";
import { loggedRefusals } from "../webhook_guard.ts";
import { presentedSecret } from "./stream_url.ts";

const log = logger("telephony");

export const exotelDialedStream = loggedRefusals("exotel", async (c: Context, deps: ApiDeps) => {
  const secret = deps.telephony?.exotel.webhookSecret;
  if (!secret) throw notConfigured("Exotel", "EXOTEL_WEBHOOK_SECRET");
  if (!sameSecret(presentedSecret(c), secret)) {
    throw new ApiError(401, "unauthorized", "Send the Exotel webhook secret (Basic or ?secret=).");
  }
  const sessionId = (c.req.query("CustomField") ?? "").slice(0, 128);
  const callSid = c.req.query("CallSid") ?? "";
  const s = sessionId ? await outboundStreamGrant(deps.sql, sessionId) : undefined;
  if (
    !s || s.direction !== "outbound" || s.metadata.phone_carrier !== "exotel" ||
    !callSid || s.metadata.phone_call_id !== callSid || s.status !== "created" ||
    !s.node_id || !s.offer_base_url || !s.token_id || !s.token_expires_at
  ) {
    throw new ApiError(409, "not_this_call", "No Exotel outbound call of ours waits for a stream.");
  }
  const { token } = await deps.signer.mint(
    { sid: sessionId, aud: s.node_id, sub: s.agent_id, ten: s.workspace_id, input: s.agent_input },
    { jti: s.token_id, expiresAt: new Date(s.token_expires_at) },
  );
  log.info("exotel outbound stream url served", { session_id: sessionId });
  const url = streamUrlOf(s.offer_base_url, "exotel", sessionId);
  return c.json({ url: `${url}?session_token=${encodeURIComponent(token)}` });
});
