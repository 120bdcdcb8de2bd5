// A phone line: what a phone call needs from whatever carries it (SIP with RTP on the worker, or a
// telephony provider's WebSocket media stream). The call pipeline (VAD, turns, recognition, the
// brain, synthesis) sees only this; each carrier implements it at its edge, where G.711 at 8 kHz
// becomes the pipeline's 16 kHz caller frames and the bot's 48 kHz frames become G.711 again.
import type { Emitter } from "../rtc/emitter.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import type { LatenessHistogram } from "../audio/pacer.ts";
import type { StreamCarrier } from "../../common/carrier.ts";

/** Who carries the call: SessionStart's `phone.carrier` ("sip" is a kind of line, not a carrier). */
export type Carrier = "sip" | StreamCarrier;

/** One RFC 4733 / provider DTMF key press, reported once, when it ends. */
export interface DtmfDigit {
  /** "0"-"9", "*", "#", "A"-"D". */
  digit: string;
  durationMs: number;
}

/** How a phone call ended, from the line's side: the session's end reason. */
export type LineEndReason =
  | "caller_hung_up"
  | "transferred"
  | "no_ack"
  | "session_expired"
  | "media_timeout"
  | "shutdown"
  | "carrier_error";

export interface TransferResult {
  ok: boolean;
  /** Why not, or what the carrier said (e.g. "REFER answered 403 Forbidden"). */
  detail: string;
}

export interface PhoneLine {
  readonly carrier: Carrier;
  /** The caller's number as the carrier gives it (E.164 when it is one), or "" if withheld. */
  readonly from: string;
  /** The dialled number. */
  readonly to: string;
  /** The carrier's id for this call (SIP Call-ID, Twilio CallSid, Plivo/Exotel stream or call id). */
  readonly callId: string;
  /**
   * The caller's audio: 16 kHz mono PCM, 320 samples per 20 ms of the caller's time, in order,
   * a lost or late frame concealed, so the VAD's clock and the recording stay true.
   */
  readonly onCallerFrame: Emitter<[Int16Array]>;
  /**
   * The band the caller's audio carries (media/stt/engine.ts ChannelKind): "narrowband" for G.711
   * at 8 kHz, which is what absent means; "wideband" for a stream already at 16 kHz (Plivo L16).
   */
  readonly channel?: "wideband" | "narrowband";
  readonly onDtmf: Emitter<[DtmfDigit]>;
  /** The far end ended the call (BYE, a provider's stop event, the socket closing, no media). */
  readonly onEnded: Emitter<[LineEndReason]>;
  /**
   * What the bot says: the line pulls 48 kHz frames (960 samples) from it every 20 ms, on the
   * worker's shared frame clock, and sends them as G.711 (silence when it gives nothing).
   */
  play(source: FrameSource): void;
  /** Drop audio already handed to the carrier but not yet played (barge-in), where it queues. */
  clear(): void;
  /** The worker ends the call (SIP BYE, or closing the provider's stream). Idempotent. */
  hangUp(): Promise<void>;
  /** Hand the caller to another number or URI (SIP REFER, or the provider's own transfer). */
  transfer(target: string): Promise<TransferResult>;
  /** Counts for the session record at the end (packets, lost, concealed, DTMF...). */
  stats(): Record<string, number>;
  /** The bot's pacing, live: frames skipped after a stall and how late ticks ran (the metrics). */
  readonly pacing: { skipped: number; histogram?: LatenessHistogram };
}
