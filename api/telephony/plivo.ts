// Plivo's answer URL (the application's Answer URL, POST):
// POST /api/v1/telephony/plivo/{agent_id}. Checks X-Plivo-Signature-V3 (with its nonce) using
// PLIVO_AUTH_TOKEN, opens the session as connect does, and answers Plivo XML that streams the
// call to the chosen worker (`<Stream>`, https://www.plivo.com/docs/voice/xml/the-stream-element):
// bidirectional, in PLIVO_STREAM_CONTENT_TYPE's format (μ-law at 8 kHz unless set to L16 at 8 or
// 16 kHz), keepCallAlive so the call lasts as long as the stream. The
// session token goes in the stream URL's query (extraHeaders allow only [A-Za-z0-9]).
import type { Context } from "hono";
import type { ApiDeps } from "../context.ts";
import {
  badSignature,
  callOfForm,
  notConfigured,
  openPhoneSession,
  signedForm,
  xmlAnswer,
  xmlEscape,
} from "./admit.ts";
import { plivoSignatureV3, sameSecret } from "./signatures.ts";

export async function plivoAnswer(c: Context, deps: ApiDeps): Promise<Response> {
  const plivo = deps.telephony?.plivo;
  if (!plivo?.authToken) throw notConfigured("Plivo", "PLIVO_AUTH_TOKEN");
  const { params, url } = await signedForm(c, deps);
  const nonce = c.req.header("x-plivo-signature-v3-nonce") ?? "";
  const expected = await plivoSignatureV3(plivo.authToken, "POST", url, params, nonce);
  const sent = (c.req.header("x-plivo-signature-v3") ?? "").split(",").map((s) => s.trim());
  if (!nonce || !sent.some((s) => sameSecret(s, expected))) throw badSignature("Plivo");
  const opened = await openPhoneSession(
    deps,
    callOfForm(c, "plivo", Object.fromEntries(params), "CallUUID"),
  );
  // No worker can take it (nothing was written): the caller hears busy, not an error.
  if (!opened) return xmlAnswer(c, `<Hangup reason="busy"/>`);
  const ws = `${opened.streamUrl}?session_token=${encodeURIComponent(opened.token)}`;
  return xmlAnswer(
    c,
    `<Stream bidirectional="true" keepCallAlive="true" audioTrack="inbound" ` +
      `contentType="${plivo.streamContentType}">${xmlEscape(ws)}</Stream>`,
  );
}
