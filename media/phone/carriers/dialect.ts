// What one telephony provider's media-stream protocol says, read into the few events a phone line
// needs. Each provider folder has one dialect (its documented JSON messages); stream_line.ts runs
// any of them over a WebSocket, so the line's timing, audio and ending are written once.
import type { StreamCarrier } from "../../../common/carrier.ts";

export type StreamEvent =
  /** Twilio's and Exotel's first message: the socket is up (nothing to do). */
  | { kind: "connected" }
  | {
    kind: "start";
    /** The provider's id of this stream: every message to it names it. */
    streamId: string;
    /** The provider's id of the phone call (Twilio CallSid, Plivo CallUUID, Exotel CallSid). */
    callId: string;
    /** The caller's and the dialled number, where the start message carries them. */
    from?: string;
    to?: string;
    /** Custom parameters (Twilio `<Parameter>`, Exotel custom_parameters). */
    params: Record<string, string>;
    /** The caller audio's coding and rate as the provider states them. */
    encoding: string;
    sampleRate: number;
  }
  /** Caller audio: base64 payload, and where it sits in the caller's time when the provider says. */
  | { kind: "media"; payload: string; timestampMs?: number }
  | { kind: "dtmf"; digit: string; durationMs: number }
  /** The provider played everything sent before the mark (Twilio/Exotel mark, Plivo playedStream). */
  | { kind: "played"; name: string }
  /** The provider dropped what it had queued (Plivo clearedAudio). */
  | { kind: "cleared" }
  | { kind: "stop" }
  /** A message of no use to the line (a track it does not read, a new event type). */
  | { kind: "other"; event: string };

/** How a stream's audio is coded both ways, and its rate. */
export interface LineFormat {
  /** G.711 μ-law bytes, or 16-bit little-endian PCM. */
  audio: "mulaw" | "slin16";
  rate: 8000 | 16000;
}

export interface StreamDialect {
  readonly carrier: StreamCarrier;
  /** How audio is coded both ways unless the start message says otherwise (`formatOf`). */
  readonly audio: "mulaw" | "slin16";
  /** The format a readable start message asks for, where the dialect offers more than one. */
  formatOf?(start: { encoding: string; sampleRate: number }): LineFormat;
  /** Bot audio goes out in messages of this many 20 ms frames (the provider's smallest chunk). */
  readonly framesPerMessage: number;
  /** One parsed JSON message from the provider; throws on one that is not its protocol. */
  read(message: unknown): StreamEvent;
  /** Why the start message's audio format cannot be read by this dialect, or undefined if it can. */
  unreadableFormat(start: { encoding: string; sampleRate: number }): string | undefined;
  media(streamId: string, payload: string, format: LineFormat): unknown;
  mark(streamId: string, name: string): unknown;
  clear(streamId: string): unknown;
  /**
   * Why a call on this stream cannot be transferred when no REST transfer is configured, where the
   * carrier has more to say than the line's general answer (what to do instead).
   */
  readonly noTransfer?: string;
}

/** The shape checks every dialect needs: a JSON object, strings where strings belong. */
export function objectOf(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new Error(`${what} is not an object`);
  }
  return v as Record<string, unknown>;
}

export function stringOf(v: unknown, what: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  throw new Error(`${what} is not a string`);
}

/** A number the providers send as a number or a numeric string; undefined when absent or not one. */
export function numberOf(v: unknown): number | undefined {
  const n = typeof v === "string" && v !== "" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}

/** String-valued entries of an object (custom parameters); anything else is left out. */
export function stringsOf(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== "object" || v === null) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === "string") out[k] = x;
  return out;
}

/**
 * The start message's audio format: its encoding as stated (else `fallback`, the provider's
 * documented default) and rate (else 8000 Hz). `rate` is the provider's name for the rate field.
 */
export function audioFormatOf(
  v: unknown,
  what: string,
  rate: "sampleRate" | "sample_rate",
  fallback: string,
): { encoding: string; sampleRate: number } {
  const format = objectOf(v ?? {}, what);
  return {
    encoding: typeof format.encoding === "string" ? format.encoding : fallback,
    sampleRate: numberOf(format[rate]) ?? 8000,
  };
}

/**
 * A `media` message's caller audio: media.payload (base64) and media.timestamp, as all three
 * providers name them. With `inboundOnly` (a bidirectional Twilio or Plivo stream carries the
 * inbound track only), a message of another track is not the caller.
 */
export function mediaEvent(
  m: Record<string, unknown>,
  event: string,
  inboundOnly: boolean,
): StreamEvent {
  const media = objectOf(m.media, "media");
  if (inboundOnly && media.track !== undefined && media.track !== "inbound") {
    return { kind: "other", event };
  }
  return {
    kind: "media",
    payload: stringOf(media.payload, "media.payload"),
    timestampMs: numberOf(media.timestamp),
  };
}

/** A `dtmf` message: dtmf.digit, and dtmf.duration in ms where the provider sends it (else 0). */
export function dtmfEvent(m: Record<string, unknown>): StreamEvent {
  const dtmf = objectOf(m.dtmf, "dtmf");
  return {
    kind: "dtmf",
    digit: stringOf(dtmf.digit, "dtmf.digit"),
    durationMs: numberOf(dtmf.duration) ?? 0,
  };
}

/** The check of the μ-law dialects (Twilio, Plivo): audio/x-mulaw at 8 kHz. */
export function unlessMulaw8k(start: { encoding: string; sampleRate: number }) {
  if (/mulaw|pcmu/i.test(start.encoding) && start.sampleRate === 8000) return undefined;
  return `the stream is ${start.encoding} at ${start.sampleRate} Hz; only audio/x-mulaw at 8000 Hz is read`;
}
