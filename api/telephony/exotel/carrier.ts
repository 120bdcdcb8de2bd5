// Exotel as the control plane sees it (../carrier.ts): the Voicebot applet's dynamic URL, which
// Exotel GETs for the stream's address (stream_url.ts); its Connect API for calls we place
// (dial.ts) and their status callbacks (dial_status.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { exotelStreamUrl } from "./stream_url.ts";
import { exotelDialer } from "./dial.ts";
import { exotelDialStatus } from "./dial_status.ts";

export const exotel: WebhookCarrier = {
  name: "exotel",
  webhooks: [
    { method: "POST", path: "/dialed/:session_id", handler: exotelDialStatus },
    ...answering("GET", exotelStreamUrl),
  ],
  dialer: exotelDialer,
};
