// Twilio's account (docs/telephony-websocket.md): the API checks X-Twilio-Signature with its auth
// token; the worker hangs up and transfers calls through its REST API.

export interface TwilioSettings {
  accountSid?: string;
  authToken?: string;
  apiUrl: string;
}

export function twilioSettings(env: Record<string, string | undefined>): TwilioSettings {
  return {
    accountSid: env.TWILIO_ACCOUNT_SID || undefined,
    authToken: env.TWILIO_AUTH_TOKEN || undefined,
    // Twilio's REST API (https://www.twilio.com/docs/usage/api); a test points it at its fake.
    apiUrl: (env.TWILIO_API_URL || "https://api.twilio.com").replace(/\/+$/, ""),
  };
}
