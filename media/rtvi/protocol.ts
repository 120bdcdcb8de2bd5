// RTVI 2.1.0 on the client's "chat" data channel: one JSON text frame per message, labelled
// "rtvi-ai" (browser-client-protocol.md §3). The worker's side; the names the page and the caller
// simulator share with it live in proto/rtvi.ts (the page imports no media code) and are
// re-exported here.
import { RTVI_LABEL } from "../../proto/rtvi.ts";

export {
  CALL_ENDED,
  type CallEnded,
  callEnded,
  CLIENT_LATENCY_T,
  type ClientLatency,
  MAX_CLIENT_LATENCY_MS,
  readCallEnded,
  readClientLatency,
  readSendText,
  RTVI_LABEL,
  RTVI_VERSION,
  SEND_TEXT,
  type SendText,
} from "../../proto/rtvi.ts";

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
