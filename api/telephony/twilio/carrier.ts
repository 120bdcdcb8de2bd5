// Twilio as the control plane sees it (../carrier.ts): its voice webhook, POSTed when a call comes
// in to a number (voice.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { twilioVoice } from "./voice.ts";

export const twilio: WebhookCarrier = {
  name: "twilio",
  webhooks: answering("POST", twilioVoice),
};
