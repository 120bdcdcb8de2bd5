// The telephony providers' credentials and addresses, from the environment (docs/
// telephony-websocket.md). The API reads them to verify a provider's webhook signature; the worker
// to hang up or transfer a call through the provider's REST API. Unset, that provider's webhook is
// refused (503, it cannot be verified) and its calls can only be ended by closing the stream.

export interface TelephonySettings {
  /**
   * The API's address as the providers call it (PUBLIC_API_URL, e.g. https://voice.example.com):
   * Twilio and Plivo sign the URL they requested, which behind a proxy is not the one the API
   * sees. Unset, the request's own URL.
   */
  publicApiUrl?: string;
  twilio: { accountSid?: string; authToken?: string; apiUrl: string };
  plivo: {
    authId?: string;
    authToken?: string;
    apiUrl: string;
    /** The `<Stream>` contentType the answer webhook asks for (PLIVO_STREAM_CONTENT_TYPE). */
    streamContentType: PlivoContentType;
  };
  /** Exotel signs nothing: its dynamic-URL request must carry this secret (Basic or ?secret=). */
  exotel: { webhookSecret?: string };
}

const trimmed = (url: string) => url.replace(/\/+$/, "");

/**
 * The `<Stream contentType>` values Plivo offers
 * (https://www.plivo.com/docs/voice/xml/the-stream-element). μ-law at 8 kHz is the default here:
 * every PSTN call is narrowband anyway; L16 at 16 kHz carries what a wideband leg (a Plivo SIP
 * endpoint or app with a wideband codec) has, with no up-sampling on the worker.
 */
export const PLIVO_CONTENT_TYPES = [
  "audio/x-mulaw;rate=8000",
  "audio/x-l16;rate=8000",
  "audio/x-l16;rate=16000",
] as const;
export type PlivoContentType = typeof PLIVO_CONTENT_TYPES[number];

function plivoContentType(value: string | undefined): PlivoContentType {
  if (!value) return "audio/x-mulaw;rate=8000";
  const known = PLIVO_CONTENT_TYPES.find((t) => t === value.replace(/\s+/g, ""));
  if (!known) {
    throw new Error(
      `PLIVO_STREAM_CONTENT_TYPE is "${value}"; it must be one of ${
        PLIVO_CONTENT_TYPES.join(", ")
      }.`,
    );
  }
  return known;
}

export function loadTelephonySettings(
  env: Record<string, string | undefined> = Deno.env.toObject(),
): TelephonySettings {
  return {
    publicApiUrl: env.PUBLIC_API_URL ? trimmed(env.PUBLIC_API_URL) : undefined,
    twilio: {
      accountSid: env.TWILIO_ACCOUNT_SID || undefined,
      authToken: env.TWILIO_AUTH_TOKEN || undefined,
      // Twilio's REST API (https://www.twilio.com/docs/usage/api); a test points it at its fake.
      apiUrl: trimmed(env.TWILIO_API_URL || "https://api.twilio.com"),
    },
    plivo: {
      authId: env.PLIVO_AUTH_ID || undefined,
      authToken: env.PLIVO_AUTH_TOKEN || undefined,
      // Plivo's REST API (https://www.plivo.com/docs/voice/api/overview); tests: its fake.
      apiUrl: trimmed(env.PLIVO_API_URL || "https://api.plivo.com"),
      streamContentType: plivoContentType(env.PLIVO_STREAM_CONTENT_TYPE),
    },
    exotel: { webhookSecret: env.EXOTEL_WEBHOOK_SECRET || undefined },
  };
}
