// A call's line carried by SIP and RTP (media/call/line.ts): the call's dialog on the worker's
// SIP service (answered or placed) for hanging up and transferring, its RTP media (media/phone/rtp_media.ts) for the audio and
// DTMF. What the far end does (BYE, no ACK, no RTP) becomes the line's end reason.
import { Emitter } from "../rtc/emitter.ts";
import type { SessionEventNote } from "../../common/session_events.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import type { DtmfDigit, LineEndReason, TransferResult } from "../phone/line.ts";
import { type CallLine, type LinePacing, type PhoneAbout, sentTo } from "../call/line.ts";
import type { AnswerChoice } from "./sdp.ts";
import type { CallEndReason } from "./uas_types.ts";
import type { ClientOutcome } from "../../sip/client_transaction.ts";
import type { TransferOutcome } from "./dialog.ts";
import type { MachineDetection } from "../../common/dial.ts";
import type { WarmRequest } from "../call/transfer.ts";
import { type LegPlacer, warmTransfer } from "./warm_transfer.ts";

/**
 * Who holds the line's dialog and sends its BYE and REFER: the worker's SIP service (uas.ts), for
 * a call it answered and for one it placed (uac.ts) alike.
 */
export interface LineDialogs {
  hangUp(callId: string): Promise<ClientOutcome | undefined>;
  transfer(callId: string, referTo: string, outcomeMs?: number): Promise<TransferOutcome>;
  /** The Refer-To with Replaces naming a held call's dialog; absent where there is none. */
  replacing?(callId: string): string | undefined;
}

/** What the line needs of the call's RTP (RtpMedia has it). */
export interface LineMedia {
  readonly onCallerFrame: Emitter<[Int16Array]>;
  readonly onDtmf: Emitter<[DtmfDigit]>;
  readonly onMediaTimeout: Emitter<[]>;
  start(choice: AnswerChoice, signalling?: string): void;
  update(choice: AnswerChoice): void;
  play(source: FrameSource): void;
  clear(): void;
  stats(): Record<string, number>;
  readonly pacing: LinePacing;
  close(): Promise<void>;
}

/** The far end's reasons that end the call; our own hang-up is not one of them. */
const ENDS: Partial<Record<CallEndReason, LineEndReason>> = {
  caller_hung_up: "caller_hung_up",
  caller_cancelled: "caller_hung_up",
  no_ack: "no_ack",
  session_expired: "session_expired",
  shutdown: "shutdown",
};

/** The Refer-To URI for a target: tel:/sip: URIs as given, an E.164 number as a tel: URI. */
export function referUri(target: string): string {
  return target.startsWith("+") ? `tel:${target}` : target;
}

export class SipLine implements CallLine {
  readonly carrier = "sip" as const;
  /** G.711 at 8 kHz. */
  readonly channel = "narrowband" as const;
  readonly onEnded = new Emitter<[LineEndReason]>();
  readonly onCallerFrame: Emitter<[Int16Array]>;
  readonly onDtmf: Emitter<[DtmfDigit]>;
  private over = false;
  private hangingUp?: Promise<void>;
  /** What the line plays, kept so a hold can give it back. */
  private playing?: { source: FrameSource; sent?: (pcm: Int16Array | undefined) => void };
  /** On hold (a warm transfer): the caller's audio does not reach the conversation. */
  private held = false;
  /** Bridged to a person (warm_transfer.ts): the call's end no longer hangs this line up. */
  bridged = false;
  /** Places a warm transfer's call to the person; absent, a warm transfer is refused. */
  warmLegs?: LegPlacer;
  /** The worker hung the line up (release): a warm transfer ringing for it gives up. */
  readonly onReleased = new Emitter<[]>();
  /** The caller's audio as the RTP brings it, held or not (a bridge relays it). */
  readonly heard: Emitter<[Int16Array]>;

  constructor(
    private readonly dialogs: LineDialogs,
    readonly callId: string,
    readonly from: string,
    readonly to: string,
    private readonly media: LineMedia,
    choice: AnswerChoice,
    /** The line's SIP events for the session record. */
    readonly note: SessionEventNote<"sip">,
    /** The address the INVITE came from (RtpMedia hears it as the SDP's c= address). */
    signalling?: string,
    /** Whether the far end rang us or we placed the call (dial_call.ts). */
    readonly direction: "inbound" | "outbound" = "inbound",
    /** A placed call's answering-machine detection (the dial's machine_detection). */
    readonly machineDetection: MachineDetection = "off",
  ) {
    this.heard = media.onCallerFrame;
    this.onCallerFrame = new Emitter();
    media.onCallerFrame.on((pcm) => {
      if (!this.held) this.onCallerFrame.emit(pcm);
    });
    this.onDtmf = media.onDtmf;
    media.onMediaTimeout.on(() => {
      if (this.over) return;
      this.note("media_timeout", {});
      void this.release().then(() => this.onEnded.emit("media_timeout"));
    });
    media.start(choice, signalling);
  }

  /** The UAS's call event for this call: a re-INVITE's new media, or the call's end. */
  mediaChanged(choice: AnswerChoice): void {
    this.note("media", { direction: choice.direction, codec: choice.codec });
    this.media.update(choice);
  }

  /** A key sent by SIP INFO: heard as an RFC 4733 one is, on the same emitter. */
  dtmfHeard(digit: DtmfDigit): void {
    if (this.over) return;
    // The digit is written once, by the call's key presses, masked while the keypad is sensitive.
    this.note("info_dtmf", { duration_ms: digit.durationMs });
    this.onDtmf.emit(digit);
  }

  farEnded(reason: CallEndReason): void {
    const end = ENDS[reason];
    if (this.over || !end) return;
    this.over = true;
    this.note("ended", { reason });
    void this.media.close();
    this.onEnded.emit(end);
  }

  get phone(): PhoneAbout {
    return {
      carrier: this.carrier,
      from: this.from,
      to: this.to,
      call_id: this.callId,
      direction: this.direction,
    };
  }

  play(source: FrameSource, sent?: (pcm: Int16Array | undefined) => void): void {
    this.playing = { source, sent };
    this.media.play(sentTo(source, sent));
  }

  /**
   * A warm transfer's hold: the caller hears `source` (taps such as the recording still see what
   * is sent) and their audio stops reaching the conversation; undefined gives back what played.
   */
  hold(source: FrameSource | undefined): void {
    if (this.over) return;
    this.held = source !== undefined;
    this.note("hold", { on: this.held });
    const back = this.playing;
    if (source) this.media.play(sentTo(source, back?.sent));
    else if (back) this.media.play(sentTo(back.source, back.sent));
  }

  /** The caller hears `source` from now on, outside the call's own play (a bridge). */
  relay(source: FrameSource): void {
    this.media.play(source);
  }

  clear(): void {
    this.media.clear();
  }

  /**
   * Our BYE, and the RTP port closes: the call is over once the BYE is sent. Its transaction goes
   * on by itself (retransmitted until answered, or Timer F at 64·T1 = 32 s), and its answer is
   * noted when it comes (`bye_answered`: "200 OK", another status, or "timeout"): a trunk that
   * vanished must not hold the session, its slot and the gauges for 32 s more. Idempotent.
   */
  hangUp(): Promise<void> {
    return this.bridged ? Promise.resolve() : this.release();
  }

  /** The BYE and the port's close, bridged or not (hangUp's body; the bridge's own end). */
  release(): Promise<void> {
    if (this.hangingUp) return this.hangingUp;
    if (this.over) return Promise.resolve();
    this.over = true;
    this.onReleased.emit();
    this.note("bye", {});
    void this.dialogs.hangUp(this.callId).then((outcome) => {
      const answer = outcome?.kind === "response"
        ? `${outcome.response.status} ${outcome.response.reason}`
        : outcome?.kind ?? "not up";
      this.note("bye_answered", { answer });
    });
    this.hangingUp = this.media.close();
    return this.hangingUp;
  }

  /** Whether the far end has ended the call, or the worker has. */
  get isOver(): boolean {
    return this.over;
  }

  /**
   * REFER; on success the worker leaves the call (BYE) as RFC 5589 has the transferor do. With
   * `warm`, the person is called first (warm_transfer.ts).
   */
  async transfer(target: string, warm?: WarmRequest): Promise<TransferResult> {
    if (this.over) return { ok: false, detail: "The call has ended." };
    if (warm) return warmTransfer(this, target, warm);
    const uri = referUri(target);
    this.note("refer", { refer_to: uri });
    const result = await this.dialogs.transfer(this.callId, uri);
    this.note("refer_outcome", { ...result });
    if (result.ok) await this.hangUp();
    return result;
  }

  /**
   * A REFER with Replaces (RFC 3891): the caller's trunk is asked to call `person` in the place
   * of our dialog with them. Undefined when the person's dialog cannot be named.
   */
  async referReplacing(
    person: { callId: string },
    outcomeMs: number,
  ): Promise<TransferOutcome | undefined> {
    const referTo = this.dialogs.replacing?.(person.callId);
    if (this.over || !referTo) return undefined;
    this.note("refer", { refer_to: referTo });
    const result = await this.dialogs.transfer(this.callId, referTo, outcomeMs);
    this.note("refer_outcome", { ...result });
    return result;
  }

  get pacing(): LinePacing {
    return this.media.pacing;
  }

  stats(): Record<string, number> {
    return this.media.stats();
  }
}
