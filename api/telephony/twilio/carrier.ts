// Twilio as the control plane sees it (../carrier.ts): its voice webhook, POSTed when a call comes
// in to a number (voice.ts); its Calls API for calls we place (dial.ts) and their status callbacks
// (dial_status.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { twilioVoice } from "./voice.ts";
import { twilioDialer } from "./dial.ts";
import { twilioDialStatus } from "./dial_status.ts";

export const twilio: WebhookCarrier = {
  name: "twilio",
  webhooks: [
    { method: "POST", path: "/dialed/:session_id", handler: twilioDialStatus },
    ...answering("POST", twilioVoice),
  ],
  dialer: twilioDialer,
};
