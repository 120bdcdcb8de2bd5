// Plivo's answer URL (the application's Answer URL, POST):
// POST /api/v1/telephony/plivo/{agent_id}. Checks X-Plivo-Signature-V3 (with its nonce) using
// PLIVO_AUTH_TOKEN, opens the session as connect does, and answers Plivo XML that streams the
// call to the chosen worker (`<Stream>`, https://www.plivo.com/docs/voice/xml/the-stream-element):
// bidirectional, in the format the Answer URL's `content_type` query or PLIVO_STREAM_CONTENT_TYPE
// names (μ-law at 8 kHz unless L16 at 8 or 16 kHz is asked for), keepCallAlive so the call lasts as long as the stream. The
// session token goes in the stream URL's query (extraHeaders allow only [A-Za-z0-9]).
import type { Context } from "hono";
import type { ApiDeps } from "../../context.ts";
import { callOfForm, openPhoneSession, xmlAnswer, xmlEscape } from "../admit.ts";
import { verifiedPlivoForm } from "./signature.ts";
import { loggedRefusals } from "../webhook_guard.ts";
import { ApiError } from "../../../common/http/errors.ts";
import {
  PLIVO_CONTENT_TYPES,
  type PlivoContentType,
} from "../../../common/carriers/plivo/settings.ts";

/**
 * The stream's audio: the Answer URL's `content_type` query (a Plivo application, and so the
 * numbers attached to it, may ask for its own), else PLIVO_STREAM_CONTENT_TYPE.
 */
function contentTypeOf(c: Context, fallback: PlivoContentType): PlivoContentType {
  const asked = c.req.query("content_type");
  if (asked === undefined) return fallback;
  const known = PLIVO_CONTENT_TYPES.find((t) => t === asked);
  if (!known) {
    throw new ApiError(
      400,
      "invalid_content_type",
      `content_type must be one of ${PLIVO_CONTENT_TYPES.join(", ")}.`,
    );
  }
  return known;
}

export const plivoAnswer = loggedRefusals("plivo", async (c: Context, deps: ApiDeps) => {
  const { plivo, params, nonce } = await verifiedPlivoForm(c, deps);
  const contentType = contentTypeOf(c, plivo.streamContentType);
  const opened = await openPhoneSession(deps, {
    ...callOfForm(c, "plivo", Object.fromEntries(params), "CallUUID"),
    nonce,
  });
  // No worker can take it (nothing was written): the caller hears busy, not an error.
  if (!opened) return xmlAnswer(c, `<Hangup reason="busy"/>`);
  const ws = `${opened.streamUrl}?session_token=${encodeURIComponent(opened.token)}`;
  return xmlAnswer(
    c,
    `<Stream bidirectional="true" keepCallAlive="true" audioTrack="inbound" ` +
      `contentType="${contentType}">${xmlEscape(ws)}</Stream>`,
  );
});
