// RTVI 2.1.0 on the client's "chat" data channel: one JSON text frame per message, labelled
// "rtvi-ai" (browser-client-protocol.md §3).
export const RTVI_LABEL = "rtvi-ai";
export const RTVI_VERSION = "2.1.0";

/**
 * The largest chat message either way, in UTF-8 bytes: the `a=max-message-size` the worker's
 * answer advertises (media/rtc/config.ts), so a well-behaved page never sends more. A larger
 * inbound message is not parsed; a larger outbound one is not sent (it would throw in the SCTP
 * stack, whose limit is the page's own).
 */
export const MAX_RTVI_MESSAGE_BYTES = 65536;

export interface RtviMessage {
  label: typeof RTVI_LABEL;
  type: string;
  id?: string;
  data?: unknown;
}

/** Whether `text` is longer than `limit` bytes in UTF-8 (counted without encoding it). */
export function overBytes(text: string, limit = MAX_RTVI_MESSAGE_BYTES): boolean {
  if (text.length > limit) return true; // every UTF-16 unit is at least one byte
  if (text.length * 3 <= limit) return false; // and at most three
  let n = 0;
  for (let i = 0; i < text.length && n <= limit; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a surrogate pair: one four-byte code point
      i++;
    } else n += 3; // the rest of the BMP; a lone surrogate is encoded as U+FFFD
  }
  return n > limit;
}

/** What arrived on the chat channel, sorted before any RTVI handling. */
export type Inbound =
  | { kind: "ping" }
  | { kind: "signalling"; message: { type?: string; receiver_index?: number; enabled?: boolean } }
  | { kind: "rtvi"; message: RtviMessage }
  | { kind: "oversized" }
  | { kind: "junk"; reason: string };

/**
 * Classifies one chat frame: too large to read, keep-alive text, signalling JSON, RTVI, or
 * something else. The size is checked before anything else looks at the text.
 */
export function classify(text: string): Inbound {
  if (overBytes(text)) return { kind: "oversized" };
  if (text.startsWith("ping")) return { kind: "ping" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "junk", reason: "not JSON" };
  }
  if (typeof value !== "object" || value === null) return { kind: "junk", reason: "not an object" };
  const v = value as Record<string, unknown>;
  if (v.type === "signalling" && typeof v.message === "object" && v.message !== null) {
    return { kind: "signalling", message: v.message as { type?: string } };
  }
  if (v.label === RTVI_LABEL && typeof v.type === "string") {
    return {
      kind: "rtvi",
      message: {
        label: RTVI_LABEL,
        type: v.type,
        id: typeof v.id === "string" ? v.id : undefined,
        data: v.data,
      },
    };
  }
  return { kind: "junk", reason: "not an RTVI message" };
}

/** One outbound RTVI frame; `id` and `data` are left out when absent (no nulls). */
export function rtvi(type: string, data?: unknown, id?: string): string {
  const m: Record<string, unknown> = { label: RTVI_LABEL, type };
  if (id !== undefined) m.id = id;
  if (data !== undefined) m.data = data;
  return JSON.stringify(m);
}

export function signalling(type: "peerLeft" | "renegotiate"): string {
  return JSON.stringify({ type: "signalling", message: { type } });
}

export const ABOUT = { library: "voice-call-service", library_version: "0.1.0" };

/**
 * The worker's last word to the page before it closes a call it ends itself: a server-message
 * `{type: "call-ended", data: {status, reason}}` (the session's end status and reason, as the
 * console shows them). A server-message because the Pipecat client drops message types it does
 * not know; brain actions share that channel as `{type, data}`, so brains should not name an
 * action "call-ended". A page that hangs up itself, or loses the connection, gets none.
 */
export const CALL_ENDED = "call-ended";

export interface CallEnded {
  type: typeof CALL_ENDED;
  data: { status: string; reason: string };
}

export function callEnded(status: string, reason: string): CallEnded {
  return { type: CALL_ENDED, data: { status, reason } };
}

/** The notice's data when `message` (a server-message's data) is one, else undefined. */
export function readCallEnded(message: unknown): CallEnded["data"] | undefined {
  const m = message as Partial<CallEnded> | null;
  if (typeof m !== "object" || m === null || m.type !== CALL_ENDED) return undefined;
  const d = m.data as Partial<CallEnded["data"]> | null | undefined;
  if (typeof d?.status !== "string" || typeof d.reason !== "string") return undefined;
  return { status: d.status, reason: d.reason };
}

/**
 * The page's (or caller simulator's) own measurement of a turn: the end of the caller's speech
 * to the first bot audio it heard, from its microphone and the received track. It travels as a
 * `client-message` with this reserved `t` because that is what the Pipecat client can send
 * (`sendClientMessage`/`sendClientRequest`; it has no way to send a new message type), and an
 * unknown type would get an "Unsupported type" error-response from Pipecat-compatible servers.
 * The worker keeps it on the turn record and never forwards it to the brain.
 */
export const CLIENT_LATENCY_T = "client-latency";
/** The largest figure accepted (ms): anything longer is not a reply being waited for. */
export const MAX_CLIENT_LATENCY_MS = 60_000;
const MAX_TURN_ID_CHARS = 128;

export interface ClientLatency {
  /** The turn it belongs to; absent: the latest speech turn (pages do not see turn ids). */
  turn_id?: string;
  end_of_speech_to_audio_ms: number;
}

/** A client-latency message's `d`, checked: the value, or why it is refused. */
export function readClientLatency(d: unknown): ClientLatency | { problem: string } {
  if (typeof d !== "object" || d === null || Array.isArray(d)) {
    return { problem: "client-latency needs an object d" };
  }
  const v = d as Record<string, unknown>;
  const ms = v.end_of_speech_to_audio_ms;
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > MAX_CLIENT_LATENCY_MS) {
    return {
      problem: `end_of_speech_to_audio_ms must be a number from 0 to ${MAX_CLIENT_LATENCY_MS}`,
    };
  }
  if (v.turn_id === undefined || v.turn_id === null) return { end_of_speech_to_audio_ms: ms };
  if (typeof v.turn_id !== "string" || v.turn_id === "" || v.turn_id.length > MAX_TURN_ID_CHARS) {
    return { problem: `turn_id must be a string of 1 to ${MAX_TURN_ID_CHARS} characters` };
  }
  return { turn_id: v.turn_id, end_of_speech_to_audio_ms: ms };
}
