// One phone call on this worker: a conversation with the brain over a phone line (SIP with RTP, or
// a telephony provider's WebSocket stream: media/phone/line.ts), with the session record, the
// recording and the end reasons a web call has. There is no page: what a web call's RTVI would
// tell it is written to the session log instead (PageRecord), so the record shows the same story.
import { activateSession, recordingOf } from "./call_open.ts";
import { logger } from "../../common/log.ts";
import { noiseSuppressionOf } from "../../common/noise_suppression.ts";
import type { PhoneEvents, RtviEvents } from "../../common/session_events.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import type { RtviEmitter } from "../rtvi/observer.ts";
import type { LineEndReason, PhoneLine } from "../phone/line.ts";
import { applyConfig, defaultConfig } from "./call_config.ts";
import { Conversation } from "./conversation.ts";
import type { CallRecording } from "./recording.ts";
import { closeCall } from "./call_close.ts";
import { SessionLog } from "./session_log.ts";
import type { TurnObserver } from "./turn_record.ts";
import type { CallOptions, EndStatus } from "./call.ts";
import { KeyPresses } from "./key_presses.ts";

const log = logger("phone-call");

/** A web call's options that a phone call shares (documented on CallOptions). */
type SharedOptions =
  | "sessionId"
  | "tokenId"
  | "agentId"
  | "brainUrl"
  | "input"
  | "engines"
  | "recordingsDir"
  | "sql"
  | "endOfTurn";

export interface PhoneCallOptions extends Pick<CallOptions, SharedOptions> {
  onEnded?: (call: PhoneCall) => void;
  /** Written to the session log before the call's own events (e.g. the SIP INVITE as admitted). */
  log?: SessionLog;
}

/**
 * What the page would have been told, recorded: the caller's final words, the bot's finished
 * units, errors and the brain's actions. Interim transcripts and a unit's progress are left out:
 * the turn record already has their timing, and on a phone call nobody watches them.
 */
export class PageRecord implements RtviEmitter {
  constructor(private readonly log: SessionLog) {}

  emit<T extends keyof RtviEvents>(type: T, data?: PhoneEvents[T]): boolean {
    const d = data as Record<string, unknown> | undefined;
    if (type === "user-transcription" && !d?.final) return true;
    if (type === "bot-output" && d?.spoken_status !== "completed") return true;
    this.log.add("phone", type, data ?? ({} as PhoneEvents[T])); // stored as {} either way
    return true;
  }
}

export class PhoneCall {
  readonly sessionId: string;
  readonly tokenId: string;
  readonly log: SessionLog;
  endStatus?: EndStatus;
  endReason?: string;
  turnObserver?: TurnObserver;
  conversation?: Conversation;
  readonly ended: Promise<void>;
  private resolveEnded!: () => void;
  private recording?: CallRecording;
  private finished = false;
  private detach: (() => void)[] = [];
  /** Key presses to the brain: limited, and held until it is up (key_presses.ts). */
  private readonly keys: KeyPresses;

  constructor(readonly line: PhoneLine, private readonly opts: PhoneCallOptions) {
    this.sessionId = opts.sessionId;
    this.tokenId = opts.tokenId;
    this.ended = new Promise((r) => (this.resolveEnded = r));
    this.log = opts.log ?? new SessionLog(opts.sql, opts.sessionId);
    this.keys = new KeyPresses(this.log, (d) => this.conversation?.onDtmf(d));
    this.detach.push(
      line.onCallerFrame.on((pcm) => this.conversation?.onCallerFrame(pcm)),
      line.onDtmf.on((d) => this.keys.press(d)),
      line.onEnded.on((reason) => this.lineEnded(reason)),
    );
  }

  /** The line is up (SIP: the 200 was sent): the session becomes active and the brain is dialled. */
  async start(): Promise<void> {
    const line = this.line;
    this.log.add("worker", "call_started", {
      carrier: line.carrier,
      from: line.from,
      to: line.to,
      call_id: line.callId,
    });
    const active = await activateSession(this.opts.sql, this.sessionId, log);
    if (this.finished) return;
    if (!this.opts.engines) return this.end("failed", "engine_unavailable");
    this.recording = recordingOf(active, this.sessionId, this.opts.recordingsDir);
    const config = applyConfig(defaultConfig(), this.opts.input?.config as never);
    this.conversation = new Conversation({
      sessionId: this.sessionId,
      agentId: this.opts.agentId,
      brainUrl: this.opts.brainUrl,
      init: this.opts.input?.init ?? null,
      config,
      engines: this.opts.engines,
      log: this.log,
      rtvi: new PageRecord(this.log),
      phone: { from: line.from, to: line.to, carrier: line.carrier, call_id: line.callId },
      // G.711 at 8 kHz: recognition starts from a prior learnt over the phone band; a line whose
      // audio is wideband (a Plivo L16 16 kHz stream) says so.
      channel: line.channel ?? "narrowband",
      transfer: (target) => {
        this.log.add("phone", "transfer", { target });
        return line.transfer(target);
      },
      recording: this.recording,
      endCall: (status, reason) => this.end(status, reason),
      endOfTurn: this.opts.endOfTurn,
      noiseSuppression: noiseSuppressionOf(this.opts.input?.config),
    });
    this.conversation.turnLog.observer = {
      latency: (step, ms) => this.turnObserver?.latency(step, ms),
      interrupted: () => {
        // Barge-in: what the carrier still holds of the bot's audio is dropped too.
        line.clear();
        this.turnObserver?.interrupted();
      },
    };
    line.play(recorded(this.conversation.speaker, this.recording));
    await this.conversation.start();
    this.keys.open();
  }

  private lineEnded(reason: LineEndReason): void {
    const status: EndStatus = reason === "carrier_error" ? "failed" : "ended";
    void this.end(status, reason);
  }

  /**
   * Ends the call once: the line hung up (unless the far end already left), the brain told
   * (Finalize, End), the recording closed and the record written.
   */
  async end(status: EndStatus, reason: string): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const endedAt = performance.now();
    this.endStatus = status;
    this.endReason = reason;
    for (const off of this.detach.splice(0)) off();
    this.keys.close();
    // Our hang-up (BYE, the stream closed); nothing when the far end ended the call or took it on.
    await this.line.hangUp().catch((err) =>
      this.log.add("phone", "hang_up_failed", { detail: (err as Error).message })
    );
    this.log.add("phone", "line", this.line.stats());
    await closeCall(
      {
        sessionId: this.sessionId,
        sql: this.opts.sql,
        log: this.log,
        conversation: this.conversation,
        recording: this.recording,
      },
      { status, reason, endedAt },
      { log, leaveNode: () => this.opts.onEnded?.(this) },
    );
    log.info("phone call ended", { session_id: this.sessionId, status, reason });
    this.resolveEnded();
  }
}

/** The bot's voice as the line pulls it, each frame also given to the recording (both 48 kHz). */
function recorded(source: FrameSource, recording?: CallRecording): FrameSource {
  if (!recording) return source;
  return {
    next(now?: number) {
      const pcm = source.next(now);
      recording.tick(pcm);
      return pcm;
    },
  };
}
