// Exotel as the control plane sees it (../carrier.ts): the Voicebot applet's dynamic URL, which
// Exotel GETs for the stream's address (stream_url.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { exotelStreamUrl } from "./stream_url.ts";

export const exotel: WebhookCarrier = {
  name: "exotel",
  webhooks: answering("GET", exotelStreamUrl),
};
