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
  plivo: { authId?: string; authToken?: string; apiUrl: string };
  /** Exotel signs nothing: its dynamic-URL request must carry this secret (Basic or ?secret=). */
  exotel: { webhookSecret?: string };
}

const trimmed = (url: string) => url.replace(/\/+$/, "");

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
    },
    exotel: { webhookSecret: env.EXOTEL_WEBHOOK_SECRET || undefined },
  };
}
