// Plivo as the control plane sees it (../carrier.ts): the application's Answer URL (answer.ts), and
// the XML Plivo fetches when the worker transfers a call (transfer.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { plivoAnswer } from "./answer.ts";
import { plivoTransferXml } from "./transfer.ts";

export const plivo: WebhookCarrier = {
  name: "plivo",
  webhooks: [
    { method: "POST", path: "/transfer/:session_id", handler: plivoTransferXml },
    ...answering("POST", plivoAnswer),
  ],
};
