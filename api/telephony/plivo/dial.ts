// Placing a call through Plivo ("Make a call", https://www.plivo.com/docs/voice/api/call/make-a-call):
// POST {PLIVO_API_URL}/v1/Account/{auth_id}/Call/, HTTP Basic (auth ID, auth token), JSON: from and
// to (digits with the country code, no `+`, as Plivo writes numbers), answer_url and answer_method
// POST (our dialed/{session_id}/answer route, which answers the `<Stream>` to the worker: its URL
// and token ride in the answer URL's `stream` query, which Plivo's V3 signature covers),
// ring_url and hangup_url (dialed/{session_id}/ring and /hangup, POST), ring_timeout (seconds), and
// machine_detection "hangup" when the call asks to hang up on a machine (Plivo then ends such a call
// itself). 201 {api_id, message: "call fired", request_uuid} is placed: request_uuid names the call
// in every callback (RequestUUID) before Plivo gives it a CallUUID. Anything else is a refusal
// (Plivo's JSON `error`).
import type { TelephonySettings } from "../../../common/telephony_settings.ts";
import type { CarrierDial, CarrierDialer, CarrierDialResult } from "../carrier.ts";

const digits = (e164: string) => e164.replace(/^\+/, "");

async function dial(settings: TelephonySettings, call: CarrierDial): Promise<CarrierDialResult> {
  const { authId, authToken, apiUrl } = settings.plivo;
  const stream = `${call.stream_url}?session_token=${encodeURIComponent(call.session_token)}`;
  const body: Record<string, string | number> = {
    from: digits(call.from),
    to: digits(call.to),
    answer_url: `${call.status_callback_url}/answer?stream=${encodeURIComponent(stream)}`,
    answer_method: "POST",
    ring_url: `${call.status_callback_url}/ring`,
    ring_method: "POST",
    hangup_url: `${call.status_callback_url}/hangup?machine=${call.machine_detection}`,
    hangup_method: "POST",
    ring_timeout: call.ring_timeout_seconds,
  };
  if (call.machine_detection === "hang_up") body.machine_detection = "hangup";
  const r = await fetch(`${apiUrl}/v1/Account/${authId}/Call/`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${authId}:${authToken}`)}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = await r.json().catch(() => ({})) as Record<string, unknown>;
  if (r.status === 201 && typeof answer.request_uuid === "string") {
    return { carrier_call_id: answer.request_uuid };
  }
  return {
    refused: {
      code: `plivo_${r.status}`,
      message: typeof answer.error === "string" ? answer.error : `HTTP ${r.status}`,
    },
  };
}

export const plivoDialer: CarrierDialer = {
  // Plivo hangs up on a machine itself; waiting for the beep is the worker's.
  detectsMachines: (mode) => mode === "hang_up",
  unconfigured: (s) =>
    !s.plivo.authId || !s.plivo.authToken ? "PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN" : undefined,
  dial,
};
