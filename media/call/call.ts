// One call on this worker, over whatever line carries it (line.ts: a page's peer, SIP with RTP, a
// carrier's stream): when the line is ready the session becomes active and, if it records, a
// recording opens; the conversation with the brain runs over the line (or the page's echo
// diagnostic); at the end the line is hung up, the brain told, the recording closed and the
// session's record written. Nothing here knows which kind of line it is.
import { noteRecording } from "./recording_store.ts";
import type { Pool } from "../../db/client.ts";
import { markActive } from "../../db/sessions.ts";
import { logger } from "../../common/log.ts";
import { noiseSuppressionOf } from "../../common/noise_suppression.ts";
import { turnSensitivityOf } from "../../common/turn_sensitivity.ts";
import type { EndOfTurnMode } from "../turn/turn_taking.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import { applyConfig, defaultConfig } from "./call_config.ts";
import { Conversation, type ConversationOutcome } from "./conversation.ts";
import { type CallLine, type EndStatus, endStatusOf, type PhoneAbout } from "./line.ts";
import { KeyPresses } from "./key_presses.ts";
import { DtmfTones } from "../phone/dtmf_tones.ts";
import { type OutboundGreeting, outboundGreetingOf } from "./greeting_gate.ts";
import { MachineWatch } from "./machine_watch.ts";
import { PageRecord } from "./page_record.ts";
import { CallRecording } from "./recording.ts";
import { endRecords } from "./record_writer.ts";
import { SessionLog } from "./session_log.ts";
import { callRedaction } from "./call_redaction.ts";
import { redactDeep } from "../../common/redaction.ts";
import type { TurnObserver } from "./turn_record.ts";
import { type CallTrace, startCallTrace } from "../trace/tracing.ts";
import { CallEcho } from "./call_echo.ts";

const log = logger("call");

export type { EndStatus };

export interface CallOptions {
  sessionId: string;
  tokenId: string;
  agentId: string;
  brainUrl: string;
  /** The normalized agent input signed into the token (init, config, record, labels). */
  input?: { init?: unknown; config?: unknown } | null;
  /** The speech engines; absent on a worker that only serves the echo diagnostic. */
  engines?: CallEngines;
  /** Folder recordings are written to. */
  recordingsDir?: string;
  sql: Pool;
  /** How the caller's turns end: the worker's END_OF_TURN (default adaptive). */
  endOfTurn?: EndOfTurnMode;
  /** The session's log, when the line wrote to it before the call (the SIP INVITE, the offer). */
  log?: SessionLog;
  /** Runs once the call has ended, before its record is written (it leaves the node's map). */
  onEnded?: (call: Call) => void;
}

export class Call {
  readonly sessionId: string;
  readonly tokenId: string;
  readonly log: SessionLog;
  endStatus?: EndStatus;
  endReason?: string;
  /** Told each turn's latencies and barge-ins as they happen (the node's metrics set it). */
  turnObserver?: TurnObserver;
  conversation?: Conversation;
  /**
   * Resolves when the call has ended and a first attempt at its record was made (it is written
   * then unless the database is away; endRecords retries it in the background).
   */
  readonly ended: Promise<void>;

  private resolveEnded!: () => void;
  private recording?: CallRecording;
  private finished = false;
  private detach: (() => void)[] = [];
  private readonly offFrames: () => void;
  /** Key presses to the brain: limited, and held until it is up (key_presses.ts). */
  private readonly keys: KeyPresses;
  /** In-band DTMF on a phone line (none on a page's). */
  private readonly tones?: DtmfTones;
  /** An outbound call's answering-machine detection, from the answer (machine_watch.ts). */
  private readonly watch?: MachineWatch;
  /** The call's OpenTelemetry trace, when an endpoint is configured (media/trace/). */
  private trace?: CallTrace;
  /** The bot's echo taken out of the caller's audio, on lines that need it (call_echo.ts). */
  private readonly echo: CallEcho;

  constructor(readonly line: CallLine, private readonly opts: CallOptions) {
    this.sessionId = opts.sessionId;
    this.tokenId = opts.tokenId;
    this.ended = new Promise((r) => (this.resolveEnded = r));
    this.log = opts.log ?? new SessionLog(opts.sql, opts.sessionId);
    // What the agent must not keep is redacted from the log and the end's turns (issue 37).
    this.log.redactWith(callRedaction(opts.sql, opts.agentId));
    // Sensitive per the brain's config in effect, or the session's before the brain is up.
    const sensitive = () =>
      (this.conversation?.config ??
        applyConfig(defaultConfig(), opts.input?.config as never)).keypad.sensitive;
    this.keys = new KeyPresses(this.log, (d) => this.conversation?.onDtmf(d), undefined, sensitive);
    this.watch = machineWatchOf(line, opts, this.log, () => void this.end("ended", "machine"));
    // A phone line's keys sent as tones: heard as keys, silenced before the VAD (dtmf_tones.ts).
    this.tones = line.phone ? new DtmfTones((d) => this.keys.press(d)) : undefined;
    this.echo = new CallEcho((pcm) => {
      this.watch?.hear(pcm);
      this.conversation?.onCallerFrame(pcm);
    });
    // Tones are heard (and silenced) first; the echo canceller then keeps its frames paired.
    this.offFrames = line.onCallerFrame.on((frame) =>
      this.echo.push(this.tones?.hear(frame) ?? frame)
    );
    this.detach.push(
      line.onDtmf.on((d) => this.keys.press(d)),
      line.onEnded.on((reason) => void this.end(endStatusOf(reason), reason)),
    );
  }

  /** Starts the call when its line is ready: a phone line now, a page at its client-ready. */
  open(): void {
    const start = (about: { about: unknown } | PhoneAbout) =>
      this.start(about).catch((err) => {
        log.error("call failed to start", { session_id: this.sessionId, error: String(err) });
        void this.end("failed", "start_failed");
      });
    if (!this.line.onReady) return void start(this.line.phone ?? { about: null });
    this.detach.push(this.line.onReady.on((about) => void start({ about })));
  }

  private async start(about: { about: unknown } | PhoneAbout): Promise<void> {
    const o = this.opts, line = this.line;
    this.log.add("worker", "call_started", about);
    const active = await activateSession(o.sql, this.sessionId);
    if (this.finished) return;
    log.info("call started", { session_id: this.sessionId, brain: o.brainUrl });
    if (o.brainUrl === "echo:" && line.echo) return line.echo();
    if (!o.engines) return void this.end("failed", "engine_unavailable");
    this.trace = await startCallTrace(this.sessionId, traceAttributes(line));
    const recording = this.recording = active?.record
      ? new CallRecording(`${o.recordingsDir ?? "data/recordings"}/${this.sessionId}.wav`)
      : undefined;
    const conversation = this.conversation = new Conversation({
      sessionId: this.sessionId,
      agentId: o.agentId,
      brainUrl: o.brainUrl,
      init: o.input?.init ?? null,
      config: applyConfig(defaultConfig(), o.input?.config as never),
      engines: o.engines,
      log: this.log,
      // A phone has no page: what it would be told is written to the record instead.
      rtvi: line.page ?? new PageRecord(this.log),
      phone: line.phone,
      channel: line.channel,
      transfer: line.transfer && ((target, warm) => {
        this.log.add("phone", "transfer", { target, warm: warm !== undefined });
        return line.transfer!(target, warm);
      }),
      recording,
      endCall: (status, reason) => this.end(status, reason),
      endOfTurn: o.endOfTurn,
      noiseSuppression: noiseSuppressionOf(o.input?.config),
      sensitivity: turnSensitivityOf(o.input?.config),
      outboundGreeting: this.greetingRule(),
      trace: this.trace,
    });
    conversation.turnLog.observer = {
      latency: (step, ms) => this.turnObserver?.latency(step, ms),
      interrupted: () => {
        // Barge-in: what the far end still holds of the bot's audio is dropped too.
        line.clear();
        this.turnObserver?.interrupted();
      },
    };
    line.converse?.(conversation);
    this.echo.open(active?.echoCancellation, line, this.log);
    line.play(conversation.speaker, this.echo.tap(recording && ((pcm) => recording.tick(pcm))));
    await conversation.start();
    this.watch?.brainReady((kind, body) => conversation.events.detection(kind, body));
    this.keys.open();
  }

  /** The keys' own counts for the line's end entry: tones heard and muted, presses heard twice. */
  private keyCounts(): Record<string, number> {
    const t = this.tones?.stats;
    return {
      ...(t ? { toneDigits: t.digits, toneMutedFrames: t.mutedFrames } : {}),
      dtmfDuplicates: this.keys.duplicates,
    };
  }

  /**
   * A call the service placed greets after the callee's "Hello?" (or a delay), per config; with
   * machine detection on, once the detector lets it (a person, or a machine's beep).
   */
  private greetingRule(): OutboundGreeting | undefined {
    if (this.line.phone?.direction !== "outbound") return undefined;
    if (this.watch) return { start: "on_detection", opens: this.watch.greetingMayPlay };
    return outboundGreetingOf(this.opts.input?.config);
  }

  /**
   * Ends the call once: the line hung up (a page told why; a phone's BYE unless the far end
   * already left), the brain told (Finalize, End), the recording closed and the record written.
   */
  async end(status: EndStatus, reason: string): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const endedAt = performance.now();
    this.endStatus = status;
    this.endReason = reason;
    for (const off of this.detach.splice(0)) off();
    this.keys.close();
    this.watch?.stop();
    // What the line still holds of the caller (a jitter buffer played out) reaches the recording
    // and the conversation before it finishes: its frames are heard until it has hung up.
    await this.line.hangUp({ status, reason }).catch((err) =>
      this.log.add("phone", "hang_up_failed", { detail: (err as Error).message })
    );
    this.offFrames();
    this.tones?.close();
    this.echo.close();
    if (this.line.stats) {
      this.log.add("phone", "line", { ...this.line.stats(), ...this.keyCounts() });
    }
    const outcome = await this.finishConversation(reason);
    this.trace?.end(status, reason, outcome?.turns ?? []);
    let recordingUrl: string | null = null;
    if (this.recording) {
      const seconds = await this.recording.close();
      recordingUrl = this.recording.url;
      this.log.add("worker", "recording_written", { url: recordingUrl, seconds });
      await this.noteForBucket(this.recording.path);
    }
    this.log.add("worker", "call_ended", { status, reason });
    // The call is over: it leaves the node's map now, whatever the database does.
    this.opts.onEnded?.(this);
    const record = endRecords.write({
      sql: this.opts.sql,
      sessionId: this.sessionId,
      status,
      reason,
      outcome: redactDeep({ ...outcome, recordingUrl }, await this.log.redaction()),
      log: this.log,
      endedAt,
    });
    await record.firstTry;
    log.info("call ended", { session_id: this.sessionId, status, reason });
    this.resolveEnded();
  }

  /** Issue 37: a durable pending upload when the agent has a bucket (recording_store.ts). */
  private async noteForBucket(path: string): Promise<void> {
    const at = { session_id: this.sessionId, agent_id: this.opts.agentId, local_path: path };
    await noteRecording(this.opts.sql, at).catch((err) =>
      log.error("recording kept locally: its upload could not be noted", {
        session_id: this.sessionId,
        cause: (err as Error).message,
      })
    );
  }

  /** The brain told (Finalize, End) and what the conversation counted; a failure is logged. */
  private async finishConversation(reason: string): Promise<ConversationOutcome | undefined> {
    try {
      return await this.conversation?.finish(reason);
    } catch (err) {
      log.error("could not finish the conversation", {
        session_id: this.sessionId,
        cause: (err as Error).message,
      });
    }
  }
}

/** The watch of an outbound call whose dial asked for machine detection; none otherwise. */
function machineWatchOf(
  line: CallLine,
  opts: CallOptions,
  log: SessionLog,
  hangUp: () => void,
): MachineWatch | undefined {
  const mode = line.machineDetection ?? "off";
  const engines = opts.engines;
  if (line.phone?.direction !== "outbound" || mode === "off" || !engines) return undefined;
  return new MachineWatch({
    mode,
    openVad: (onFrame) => engines.vad({}, { onFrame }),
    log,
    hangUp,
  });
}

/** What the call's span says of its line (no numbers: they are the caller's). */
function traceAttributes(line: CallLine): Record<string, string> {
  const p = line.phone;
  if (!p) return { "voice.line": "web" };
  return {
    "voice.line": "phone",
    "voice.carrier": p.carrier,
    "voice.direction": p.direction ?? "inbound",
  };
}

/**
 * Marks the session active; says whether it records. The database being away must not stop a
 * call: it goes on unrecorded, and its end is written when the database returns.
 */
async function activateSession(sql: Pool, sessionId: string) {
  const active = await markActive(sql, sessionId).catch((err) => {
    log.warn("could not mark the session active; the call goes on, unrecorded", {
      session_id: sessionId,
      cause: (err as Error).message,
    });
    return { record: false, echoCancellation: undefined };
  });
  if (!active) log.warn("session was not connecting at call start", { session_id: sessionId });
  return active;
}
