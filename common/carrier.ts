// The carriers whose calls come to the worker over their own media WebSocket: the one
// declaration of their names. "sip" is no carrier here but a kind of line (media/phone/line.ts).
// Each has a folder on each side (common/carriers/NAME/ for what both share, media/phone/carriers/
// NAME/ for its stream, api/telephony/NAME/ for its webhooks), and each side's registry
// (media/phone/carriers/registry.ts, api/telephony/carriers.ts) is keyed by this type, so a name
// added here fails `deno check` until both sides have the carrier.

export type StreamCarrier = "twilio" | "plivo" | "exotel";
