// Placing a call through Exotel ("Connect Voice AI API",
// https://developer.exotel.com/docs/agentstream/connect-voice-ai, and the Connect API it shares,
// https://developer.exotel.com/docs/voice-v1/api-reference/connect-to-flow):
// POST {EXOTEL_API_URL}/v1/Accounts/{sid}/Calls/connect.json, HTTP Basic (API key, API token),
// form-encoded: From (the number Exotel dials first: the callee), CallerId (our ExoPhone),
// StreamUrl (the worker's stream URL with the session token in its query, as the Voicebot
// applet's dynamic URL answers it) and StreamType=bidirectional, so Exotel opens the stream on
// answer with no App Bazaar flow; TimeOut (ring seconds; the flow variant documents it, assumed
// honoured here too); StatusCallback (our dialed/{session_id} route with the webhook secret in
// its query: Exotel signs nothing) and StatusCallbackEvents ringing, answered, terminal. A 200 or
// 201 with {"Call": {"Sid"}} is placed; anything else is a refusal (Exotel's RestException).
// Exotel's API offers no machine detection: a call that asks for it relies on the worker's own.
import type { TelephonySettings } from "../../../common/telephony_settings.ts";
import type { CarrierDial, CarrierDialer, CarrierDialResult } from "../carrier.ts";

async function dial(settings: TelephonySettings, call: CarrierDial): Promise<CarrierDialResult> {
  const { accountSid, apiKey, apiToken, apiUrl, webhookSecret } = settings.exotel;
  const form = new URLSearchParams({
    From: call.to,
    CallerId: call.from,
    StreamUrl: `${call.stream_url}?session_token=${encodeURIComponent(call.session_token)}`,
    StreamType: "bidirectional",
    TimeOut: String(call.ring_timeout_seconds),
    StatusCallback: `${call.status_callback_url}?secret=${encodeURIComponent(webhookSecret!)}`,
    "StatusCallbackEvents[0]": "ringing",
    "StatusCallbackEvents[1]": "answered",
    "StatusCallbackEvents[2]": "terminal",
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
  unconfigured: (s) =>
    !s.exotel.accountSid || !s.exotel.apiKey || !s.exotel.apiToken || !s.exotel.webhookSecret
      ? "EXOTEL_ACCOUNT_SID, EXOTEL_API_KEY, EXOTEL_API_TOKEN and EXOTEL_WEBHOOK_SECRET"
      : undefined,
  dial,
};
