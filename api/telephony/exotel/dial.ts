// Placing a call through Exotel ("Connect Number to Call Flow",
// https://developer.exotel.com/docs/voice-v1/api-reference/connect-to-flow, as "Connect Voice AI
// with Flow" uses it, https://developer.exotel.com/docs/agentstream/connect-voice-ai-flow):
// POST {EXOTEL_API_URL}/v1/Accounts/{sid}/Calls/connect.json, HTTP Basic (API key, API token),
// form-encoded: From (the number Exotel dials first: the callee), CallerId (our ExoPhone), Url
// (EXOTEL_OUTBOUND_FLOW_URL: a flow whose Voicebot applet's URL is our dialed_stream.ts endpoint),
// CustomField (the session id, which Exotel hands the applet), TimeOut (ring seconds),
// StatusCallback (our dialed/{session_id} route with the webhook secret in its query: Exotel signs
// nothing) and StatusCallbackEvents answered and terminal. A 200 with {"Call": {"Sid"}} is placed;
// anything else is a refusal (Exotel's RestException).
// Why a flow and not "Connect Voice AI" (StreamUrl on the request,
// https://developer.exotel.com/docs/agentstream/connect-voice-ai): its StreamUrl is capped at 600
// characters, and the worker's stream URL with the session token in it is longer; through the
// flow the token is fetched at answer time and never sent to Exotel's REST API.
// Exotel's API offers no machine detection: a call that asks for it relies on the worker's own.
import type { TelephonySettings } from "../../../common/telephony_settings.ts";
import type { CarrierDial, CarrierDialer, CarrierDialResult } from "../carrier.ts";

async function dial(settings: TelephonySettings, call: CarrierDial): Promise<CarrierDialResult> {
  const { accountSid, apiKey, apiToken, apiUrl, webhookSecret, outboundFlowUrl } = settings.exotel;
  const form = new URLSearchParams({
    From: call.to,
    CallerId: call.from,
    Url: outboundFlowUrl!,
    CustomField: call.session_id,
    TimeOut: String(call.ring_timeout_seconds),
    StatusCallback: `${call.status_callback_url}?secret=${encodeURIComponent(webhookSecret!)}`,
    "StatusCallbackEvents[0]": "answered",
    "StatusCallbackEvents[1]": "terminal",
  });
  const r = await fetch(`${apiUrl}/v1/Accounts/${accountSid}/Calls/connect.json`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${apiKey}:${apiToken}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: form,
    signal: AbortSignal.timeout(10_000),
  });
  const answer = await r.json().catch(() => ({})) as {
    Call?: { Sid?: unknown };
    RestException?: { Message?: unknown; Code?: unknown };
  };
  if ((r.status === 200 || r.status === 201) && typeof answer.Call?.Sid === "string") {
    return { carrier_call_id: answer.Call.Sid };
  }
  const message = answer.RestException?.Message;
  return {
    refused: {
      code: `exotel_${answer.RestException?.Code ?? r.status}`,
      message: typeof message === "string" ? message : `HTTP ${r.status}`,
    },
  };
}

export const exotelDialer: CarrierDialer = {
  // Exotel's call API has no machine detection: the worker's detector runs on every such call.
  detectsMachines: () => false,
  unconfigured: (s) =>
    !s.exotel.accountSid || !s.exotel.apiKey || !s.exotel.apiToken || !s.exotel.webhookSecret ||
      !s.exotel.outboundFlowUrl
      ? "EXOTEL_ACCOUNT_SID, EXOTEL_API_KEY, EXOTEL_API_TOKEN, EXOTEL_WEBHOOK_SECRET and " +
        "EXOTEL_OUTBOUND_FLOW_URL"
      : undefined,
  dial,
};
