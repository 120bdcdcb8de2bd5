// Exotel's webhook secret and account (docs/telephony-websocket.md). Exotel signs nothing: its
// dynamic-URL request and the status callbacks of calls we place must carry the secret (Basic or
// ?secret=). The account (SID, API key and token) is for placing calls through its Connect API
// (api/telephony/exotel/dial.ts); its calls have no other REST control here.

export interface ExotelSettings {
  webhookSecret?: string;
  accountSid?: string;
  apiKey?: string;
  apiToken?: string;
  /** Exotel's API host: Singapore's by default, `https://api.in.exotel.com` for Mumbai. */
  apiUrl: string;
  /**
   * The App Bazaar flow calls we place are connected to once answered
   * (`http://my.exotel.com/{sid}/exoml/start_voice/{app_id}`): a Voicebot applet whose URL is
   * our `/api/v1/telephony/exotel/dialed` endpoint with the webhook secret.
   */
  outboundFlowUrl?: string;
}

export function exotelSettings(env: Record<string, string | undefined>): ExotelSettings {
  return {
    webhookSecret: env.EXOTEL_WEBHOOK_SECRET || undefined,
    accountSid: env.EXOTEL_ACCOUNT_SID || undefined,
    apiKey: env.EXOTEL_API_KEY || undefined,
    apiToken: env.EXOTEL_API_TOKEN || undefined,
    // https://developer.exotel.com/docs/voice-v1/overview (regional hosts); tests: its fake.
    apiUrl: (env.EXOTEL_API_URL || "https://api.exotel.com").replace(/\/+$/, ""),
    outboundFlowUrl: env.EXOTEL_OUTBOUND_FLOW_URL || undefined,
  };
}
