// The FAKE carrier accounts the telephony tests configure the API with: a Twilio account, a Plivo
// account and an Exotel webhook secret, each with its own made-up token.
import { loadTelephonySettings } from "../../common/telephony_settings.ts";

export const TWILIO_ACCOUNT = "AC0123456789abcdef0123456789abcdef";
export const TWILIO_TOKEN = "twilio-auth-token";
export const PLIVO_TOKEN = "plivo-auth-token";
export const EXOTEL_SECRET = "exotel-secret";

export const fakeCarrierAccounts = () =>
  loadTelephonySettings({
    TWILIO_ACCOUNT_SID: TWILIO_ACCOUNT,
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    PLIVO_AUTH_ID: "MAXXXXXXXXXXXXXXXXXX",
    PLIVO_AUTH_TOKEN: PLIVO_TOKEN,
    EXOTEL_WEBHOOK_SECRET: EXOTEL_SECRET,
  });
