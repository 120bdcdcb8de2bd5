// A call's line: what one call (call.ts) needs from whatever carries it. A page's WebRTC peer
// (web_line.ts), SIP with RTP (media/sip/sip_line.ts) and a carrier's media stream
// (media/phone/carriers/stream_line.ts) each implement it at their edge, where their audio
// becomes the pipeline's 16 kHz caller frames and the bot's 48 kHz frames become theirs again.
// The call's lifecycle (activate, record, converse, close) is written once, over this.
import type { Emitter } from "../rtc/emitter.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import type { LatenessHistogram } from "../audio/pacer.ts";
import type { RtviEmitter } from "../rtvi/observer.ts";
import type { ChannelKind } from "../stt/engine.ts";
import type { Carrier, DtmfDigit, TransferResult } from "../phone/line.ts";
import type { Conversation } from "./conversation.ts";
import type { WarmRequest } from "./transfer.ts";
import type { MachineDetection } from "../../common/dial.ts";

export type EndStatus = "ended" | "failed";

/** Who rang and how, on a phone line: SessionStart's `phone`, and the call's `call_started`. */
export interface PhoneAbout {
  carrier: Carrier;
  /** The caller's number as the carrier gives it (E.164 when it is one), or "" if withheld. */
  from: string;
  /** The dialled number. */
  to: string;
  /** The carrier's id for this call (SIP Call-ID, Twilio CallSid, Plivo/Exotel stream or call id). */
  call_id: string;
  /** Whether the far end rang (inbound, the default) or the service placed the call (issue 34). */
  direction?: "inbound" | "outbound";
}

/** The line's pacing, live: frames skipped after a stall and how late ticks ran (the metrics). */
export interface LinePacing {
  skipped: number;
  histogram?: LatenessHistogram;
  /** Frames that carried the bot's voice, where the line counts them (a web line). */
  voiced?: number;
}

/** Line end reasons that are failures; every other end of a line is an `ended` call. */
const FAILED_ENDS = new Set(["carrier_error", "ice_failed", "connect_timeout"]);

/** The session's status for a call its line ended. */
export function endStatusOf(reason: string): EndStatus {
  return FAILED_ENDS.has(reason) ? "failed" : "ended";
}

export interface CallLine {
  /** A phone line's caller, number and carrier; absent on a web call (a page is no phone). */
  readonly phone?: PhoneAbout;
  /**
   * The band the caller's audio carries (media/stt/engine.ts ChannelKind): "narrowband" for G.711
   * at 8 kHz, "wideband" for a page's Opus or a stream already at 16 kHz (Plivo L16).
   */
  readonly channel: ChannelKind;
  /**
   * The caller's audio: 16 kHz mono PCM, 320 samples per 20 ms of the caller's time, in order,
   * a lost or late frame concealed, so the VAD's clock and the recording stay true.
   */
  readonly onCallerFrame: Emitter<[Int16Array]>;
  /** A key the caller pressed, once, when it ends (phone lines). */
  readonly onDtmf: Emitter<[DtmfDigit]>;
  /**
   * The far end ended the call: a phone's BYE, stop event or silence (media/phone/line.ts
   * LineEndReason), a page that left, went quiet or never connected (web_line.ts).
   */
  readonly onEnded: Pick<Emitter<[string]>, "on">;
  /**
   * Set on a line whose far end says when it is ready, with what it says of itself (a page's
   * client-ready `about`); a line without it is ready when made (a phone call is answered).
   */
  readonly onReady?: Emitter<[unknown]>;
  /** Where the page hears of the call (RTVI); absent, the call writes it to its record. */
  readonly page?: RtviEmitter;
  /**
   * What the bot says: the line pulls 48 kHz frames (960 samples) from it every 20 ms on the
   * worker's shared frame clock. `sent` sees each 20 ms as it goes, silence as undefined (the
   * recording's bot channel).
   */
  play(source: FrameSource, sent?: (pcm: Int16Array | undefined) => void): void;
  /**
   * What to do about an answering machine on a call the service placed (the dial's
   * machine_detection, issue 34); absent or `off`, no detection runs (machine_watch.ts).
   */
  readonly machineDetection?: MachineDetection;
  /** A line whose far end talks to the conversation other than by voice (a page) gets it here. */
  converse?(conversation: Conversation): void;
  /** The echo diagnostic instead of a conversation, on a line that has one (a page's). */
  echo?(): void;
  /** Drop audio already handed to the far end but not yet played (barge-in), where it queues. */
  clear(): void;
  /** The worker ends the call (a page told why, a SIP BYE, a stream closed). Idempotent. */
  hangUp(end: { status: EndStatus; reason: string }): Promise<void>;
  /**
   * Hand the caller to another number or URI (SIP REFER, a carrier's own transfer); with `warm`,
   * call the person first and whisper to them (media/sip/warm_transfer.ts).
   */
  transfer?(target: string, warm?: WarmRequest): Promise<TransferResult>;
  /** A phone line's counts for the session record at the end (packets, lost, concealed, DTMF). */
  stats?(): Record<string, number>;
  readonly pacing: LinePacing;
}

/** `source` as a line pulls it, each frame also given to `sent` (lines that pull only frames). */
export function sentTo(
  source: FrameSource,
  sent?: (pcm: Int16Array | undefined) => void,
): FrameSource {
  if (!sent) return source;
  return {
    next(now?: number) {
      const pcm = source.next(now);
      sent(pcm);
      return pcm;
    },
  };
}
