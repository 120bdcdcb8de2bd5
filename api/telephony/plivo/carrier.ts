// Plivo as the control plane sees it (../carrier.ts): the application's Answer URL (answer.ts), the
// XML Plivo fetches when the worker transfers a call (transfer.ts), its Call API for calls we place
// (dial.ts) and their ring, answer and hangup callbacks (dial_status.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { plivoAnswer } from "./answer.ts";
import { plivoTransferXml } from "./transfer.ts";
import { plivoDialer } from "./dial.ts";
import { plivoDialEvent } from "./dial_status.ts";

export const plivo: WebhookCarrier = {
  name: "plivo",
  webhooks: [
    { method: "POST", path: "/transfer/:session_id", handler: plivoTransferXml },
    { method: "POST", path: "/dialed/:session_id/:event", handler: plivoDialEvent },
    ...answering("POST", plivoAnswer),
  ],
  dialer: plivoDialer,
};
