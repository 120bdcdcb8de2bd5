// Exotel as the control plane sees it (../carrier.ts): the Voicebot applet's dynamic URL, which
// Exotel GETs for the stream's address (stream_url.ts); its Connect API for calls we place
// (dial.ts), their status callbacks (dial_status.ts) and the outbound flow's Voicebot URL
// (dialed_stream.ts).
import { answering, type WebhookCarrier } from "../carrier.ts";
import { exotelStreamUrl } from "./stream_url.ts";
import { exotelDialer } from "./dial.ts";
import { exotelDialStatus } from "./dial_status.ts";
import { exotelDialedStream } from "./dialed_stream.ts";

export const exotel: WebhookCarrier = {
  name: "exotel",
  webhooks: [
    { method: "POST", path: "/dialed/:session_id", handler: exotelDialStatus },
    // Before "/:agent_id", which would take "dialed" for an agent id.
    { method: "GET", path: "/dialed", handler: exotelDialedStream },
    ...answering("GET", exotelStreamUrl),
  ],
  dialer: exotelDialer,
};
