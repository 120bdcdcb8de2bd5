// Twilio's voice webhook (the number's "A call comes in" URL):
// POST /api/v1/telephony/twilio/{agent_id}. Checks X-Twilio-Signature with TWILIO_AUTH_TOKEN,
// opens the session as connect does, and answers TwiML that connects the call to the chosen
// worker's media stream (`<Connect><Stream>`, https://www.twilio.com/docs/voice/twiml/stream).
// The stream URL may not carry a query string, so the session token (and the numbers) go in
// `<Parameter>`s, which Twilio hands the worker in the start message's customParameters.
import type { Context } from "hono";
import type { ApiDeps } from "../../context.ts";
import { callOfForm, openPhoneSession, xmlAnswer, xmlEscape } from "../admit.ts";
import { twilioForm } from "./signed_form.ts";
import { loggedRefusals } from "../webhook_guard.ts";

export const twilioVoice = loggedRefusals("twilio", async (c: Context, deps: ApiDeps) => {
  const form = await twilioForm(c, deps);
  const opened = await openPhoneSession(deps, callOfForm(c, "twilio", form, "CallSid"));
  // No worker can take it (nothing was written): the caller hears busy, not an error.
  if (!opened) return xmlAnswer(c, `<Reject reason="busy"/>`);
  const param = (name: string, value: string) =>
    `<Parameter name="${name}" value="${xmlEscape(value)}"/>`;
  return xmlAnswer(
    c,
    `<Connect><Stream url="${xmlEscape(opened.streamUrl)}">` +
      param("session_token", opened.token) + param("from", form.From ?? "") +
      param("to", form.To ?? "") + `</Stream></Connect>`,
  );
});
