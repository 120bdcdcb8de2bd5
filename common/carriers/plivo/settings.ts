// Plivo's account (docs/telephony-websocket.md): the API checks X-Plivo-Signature-V3 with its auth
// token and asks for the stream's format; the worker hangs up and transfers calls through its
// REST API.

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

export interface PlivoSettings {
  authId?: string;
  authToken?: string;
  apiUrl: string;
  /** The `<Stream>` contentType the answer webhook asks for (PLIVO_STREAM_CONTENT_TYPE). */
  streamContentType: PlivoContentType;
}

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

export function plivoSettings(env: Record<string, string | undefined>): PlivoSettings {
  return {
    authId: env.PLIVO_AUTH_ID || undefined,
    authToken: env.PLIVO_AUTH_TOKEN || undefined,
    // Plivo's REST API (https://www.plivo.com/docs/voice/api/overview); tests: its fake.
    apiUrl: (env.PLIVO_API_URL || "https://api.plivo.com").replace(/\/+$/, ""),
    streamContentType: plivoContentType(env.PLIVO_STREAM_CONTENT_TYPE),
  };
}
