// Placing a call through Twilio ("Create a Call resource",
// https://www.twilio.com/docs/voice/api/call-resource#create-a-call-resource):
// POST {TWILIO_API_URL}/2010-04-01/Accounts/{AccountSid}/Calls.json, HTTP Basic (AccountSid,
// AuthToken), form-encoded: To, From, Twiml (the `<Connect><Stream>` the voice webhook answers
// inbound calls with: the worker's stream URL and the session token as a `<Parameter>`, since the
// URL may carry no query), Timeout (ring seconds), StatusCallback (our dialed/{session_id} route)
// with StatusCallbackEvent initiated, ringing, answered, completed, and MachineDetection when the
// call asks for it (Enable for hang_up: Twilio's verdict comes as AnsweredBy; DetectMessageEnd for
// leave_message, so the stream starts after the greeting and its beep). 201 with the Call (`sid`)
// is placed; anything else is Twilio's refusal (its JSON `code` and `message`).
import type { TelephonySettings } from "../../../common/telephony_settings.ts";
import { xmlEscape } from "../admit.ts";
import type { CarrierDial, CarrierDialer, CarrierDialResult } from "../carrier.ts";

/** Basic credentials for Twilio's REST API (never logged). */
const basic = (sid: string, token: string) => `Basic ${btoa(`${sid}:${token}`)}`;

export function outboundTwiml(call: CarrierDial): string {
  return `<Response><Connect><Stream url="${xmlEscape(call.stream_url)}">` +
    `<Parameter name="session_token" value="${xmlEscape(call.session_token)}"/>` +
    `<Parameter name="from" value="${xmlEscape(call.from)}"/>` +
    `<Parameter name="to" value="${xmlEscape(call.to)}"/>` +
    `</Stream></Connect></Response>`;
}

async function dial(settings: TelephonySettings, call: CarrierDial): Promise<CarrierDialResult> {
  const { accountSid, authToken, apiUrl } = settings.twilio;
  const form = new URLSearchParams({
    To: call.to,
    From: call.from,
    Twiml: outboundTwiml(call),
    Timeout: String(call.ring_timeout_seconds),
    // The machine mode rides in the URL (Twilio signs it) so the status webhook knows it.
    StatusCallback: `${call.status_callback_url}?machine=${call.machine_detection}`,
    StatusCallbackMethod: "POST",
  });
  for (const e of ["initiated", "ringing", "answered", "completed"]) {
    form.append("StatusCallbackEvent", e);
  }
  if (call.machine_detection === "hang_up") form.set("MachineDetection", "Enable");
  if (call.machine_detection === "leave_message") form.set("MachineDetection", "DetectMessageEnd");
  const r = await fetch(`${apiUrl}/2010-04-01/Accounts/${accountSid}/Calls.json`, {
    method: "POST",
    headers: {
      Authorization: basic(accountSid!, authToken!),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: form,
    signal: AbortSignal.timeout(10_000),
  });
  const body = await r.json().catch(() => ({})) as Record<string, unknown>;
  if (r.status === 201 && typeof body.sid === "string") return { carrier_call_id: body.sid };
  return {
    refused: {
      code: `twilio_${body.code ?? r.status}`,
      message: typeof body.message === "string" ? body.message : `HTTP ${r.status}`,
    },
  };
}

/**
 * Ends a call Twilio placed ("Update a Call resource", Status=completed): an answering machine
 * when the call asked to hang up on one. False when Twilio did not take it.
 */
export async function hangUpTwilioCall(
  settings: TelephonySettings,
  callSid: string,
): Promise<boolean> {
  const { accountSid, authToken, apiUrl } = settings.twilio;
  const r = await fetch(`${apiUrl}/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`, {
    method: "POST",
    headers: {
      Authorization: basic(accountSid!, authToken!),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ Status: "completed" }),
    signal: AbortSignal.timeout(10_000),
  });
  await r.body?.cancel();
  return r.ok;
}

export const twilioDialer: CarrierDialer = {
  // MachineDetection=Enable (hang_up) and DetectMessageEnd (leave_message: TwiML runs after the beep).
  detectsMachines: (mode) => mode !== "off",
  unconfigured: (s) =>
    !s.twilio.accountSid || !s.twilio.authToken
      ? "TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN"
      : undefined,
  dial,
};
