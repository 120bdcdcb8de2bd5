// A conversation with the customer's brain on one call; it wires the stages and holds no tuning:
// the caller's frames (from the call's line) → the caller's audio (media/caller_audio/, its hooks
// caller_hooks.ts) → the brain → the bot's voice (bot_voice.ts); the page hears of it through the
// RTVI observer; what waits for the bot to fall quiet is when_quiet.ts. docs/decisions.md.
import { logger } from "../../common/log.ts";
import type { CallFailure } from "../../common/session_events.ts";
import { BrainConnection, type BrainFrame } from "../brain/connection.ts";
import { heardBody, readBrainFrame } from "../brain/frames.ts";
import { brainLimits } from "../brain/limits.ts";
import { CallerAudio } from "../caller_audio/caller_audio.ts";
import type { UsageRecord } from "../engines/routing.ts";
import type { Speaker } from "../speech/speaker.ts";
import { IdleStage } from "../turn/idle.ts";
import { ReplyTimer } from "../turn/reply_timer.ts";
import type { RtviMessage } from "../rtvi/protocol.ts";
import { RtviObserver } from "../rtvi/observer.ts";
import { type CallConfig, type ConfigPatch, reconfigure } from "./call_config.ts";
import { BotVoice } from "./bot_voice.ts";
import type { ConversationOptions, ConversationOutcome } from "./conversation_options.ts";
import { TurnLog } from "./turn_record.ts";
import { WhenQuiet } from "./when_quiet.ts";
import { openTogether } from "./open_together.ts";
import { CallSpeech } from "./call_speech.ts";
import { callerHooks, type CallerSide } from "./caller_hooks.ts";
import { BrainEvents } from "./brain_events.ts";
import { sayRefusal } from "./say.ts";
import type { DtmfDigit } from "../phone/line.ts";
import { shownDigit } from "./key_presses.ts";
import { GreetingGate } from "./greeting_gate.ts";
import { wholeSpeech } from "./transfer.ts";

const log = logger("conversation");

export type { ConversationOptions, ConversationOutcome } from "./conversation_options.ts";

const now = () => performance.now();
const IDLE = "idle_elapsed";

export class Conversation {
  config: CallConfig;
  readonly turnLog = new TurnLog();
  /** The bot's voice: the call's outbound source. */
  readonly speaker: Speaker;
  private voice: BotVoice;
  private brain?: BrainConnection;
  private caller?: CallerAudio;
  private page: RtviObserver;
  private idle = new IdleStage(() => this.quiet, () => this.caller?.floor({ type: IDLE }));
  private speech: CallSpeech;
  private usageAtEnd?: UsageRecord;
  /** Turn ids this service opened; units for any other id are dropped. */
  private issued = new Set<string>(["greeting"]);
  private replyTimer = new ReplyTimer((turnId, ms) => this.onReplyTimeout(turnId, ms));
  private limits = { ...brainLimits };
  private finished = false;
  private gate?: GreetingGate; // an outbound call's greeting, held for the callee's hello
  /** The brain's EndSession and Transfer, once the bot has finished what it says. */
  private whenQuiet: WhenQuiet;
  /** Caller events and turn metrics as the brain asked (config.events); machine detection. */
  readonly events = new BrainEvents(
    (kind, body) => this.brain?.send(kind, body),
    () => this.config.events,
  );

  constructor(private opts: ConversationOptions) {
    this.config = opts.config;
    this.speech = new CallSpeech(opts.engines, opts);
    this.page = new RtviObserver(opts.rtvi);
    this.voice = new BotVoice({
      sessionId: opts.sessionId,
      synthesize: (text, signal) => {
        const { voice, language } = this.config.tts;
        return this.speech.synthesize(text, { voice, language }, signal);
      },
      limits: { maxUnits: this.limits.maxQueuedUnits, maxChars: this.limits.maxQueuedChars },
      page: this.page,
      record: this.turnLog,
      log: opts.log,
      hooks: {
        onFloor: (event) => {
          this.caller?.floor(event);
          if (event.type === "reply_finished") this.turnOver(event.turnId);
        },
        onSpeaking: (on) => this.caller?.botSpeaking(on),
        onHeard: (u) => this.brain?.send("heard", heardBody(u)),
        onIdle: () => {
          this.idle.activity();
          this.whenQuiet.quiet();
        },
        onVoiceless: (err) => this.fail("synthesis_failed", err.message),
      },
    });
    this.speaker = this.voice.speaker;
    this.whenQuiet = new WhenQuiet({
      log: opts.log,
      botBusy: () => this.voice.busy,
      endCall: (status, reason) => opts.endCall(status, reason),
      transfer: opts.transfer,
      transferFailed: (target, detail, reason) =>
        this.brain?.send("transfer_failed", { target, detail, reason }),
      speak: (text) => wholeSpeech(this.speech, text, this.config.tts),
    });
  }

  /** Nobody speaks, nothing plays, no reply is awaited: the idle stage times this. */
  private get quiet(): boolean {
    return !this.whenQuiet.ending && !this.voice.busy && (this.caller?.listening ?? false);
  }

  /** Call start: streams open, the brain is dialled and greeted. */
  async start(): Promise<void> {
    const o = this.opts;
    const opened = await openTogether(
      [o.engines.vad(), this.speech.openRecognition(this.config.stt.language), this.dialBrain()],
      () => !this.finished,
    );
    if (!opened) return;
    this.brain = opened.brain;
    if (!opened.ok) return this.fail(opened.reason, opened.detail);
    this.caller = new CallerAudio({
      vad: opened.vad,
      recognition: opened.recognition,
      openRecognition: (language) => this.speech.openRecognition(language),
      language: this.config.stt.language,
      mode: o.endOfTurn,
      speculative: this.config.turns.speculative,
      bargeInMs: o.bargeInMs,
      noiseSuppression: o.noiseSuppression,
      sensitivity: o.sensitivity,
      hooks: callerHooks(this.callerSide()),
      record: this.turnLog,
      log: o.log,
    });
    this.caller.floor({ type: "greeting_expected" });
    this.turnLog.open("greeting", "greeting", now());
    this.brain!.send("session_start", {
      session_id: o.sessionId,
      agent_id: o.agentId,
      init_json: JSON.stringify(o.init ?? {}),
      config: this.config,
      ...(o.phone ? { phone: o.phone } : {}),
      ...(o.trace ? { traceparent: o.trace.traceparent, tracestate: o.trace.tracestate } : {}),
    });
    this.replyTimer.arm("greeting", o.greetingTimeoutMs ?? this.limits.greetingTimeoutMs);
    const held = { unit: this.unit.bind(this) };
    if (o.outboundGreeting) this.gate = new GreetingGate(o.outboundGreeting, o.log, held);
    this.idle.timeoutMs = this.config.idle.timeout_ms;
  }

  private dialBrain(): Promise<BrainConnection> {
    const o = this.opts;
    return BrainConnection.dial(o.brainUrl, o.sessionId, {
      dialTimeoutMs: this.limits.connectTimeoutMs,
      maxFrameBytes: this.limits.maxFrameBytes,
      unresponsiveMs: this.limits.unresponsiveMs,
      log: o.log,
      onFrame: (f) => this.onBrainFrame(f),
      onSilent: (detail) => this.page.error(detail, false),
      onViolation: (reason, detail) => this.fail(reason, detail),
      onClosed: (code) => {
        if (!this.whenQuiet.ending) {
          this.fail("brain_disconnected", `the brain closed the socket (${code})`);
        }
      },
    });
  }

  /** What the caller's hooks reach of this conversation (caller_hooks.ts). */
  private callerSide(): CallerSide {
    return {
      sessionId: this.opts.sessionId,
      log: this.opts.log,
      page: this.page,
      events: this.events,
      voice: this.voice,
      idle: this.idle,
      turnLog: this.turnLog,
      toBrain: (kind, body) => this.brain?.send(kind, body),
      issue: (turnId) => this.issued.add(turnId),
      armReplyTimer: (turnId) =>
        this.replyTimer.arm(turnId, this.opts.replyTimeoutMs ?? this.limits.replyTimeoutMs),
      clearReplyTimer: (turnId) => this.replyTimer.clear(turnId),
      unit: (turnId, unitId, text, last) => this.unit(turnId, unitId, text, last),
      turnOver: (turnId) => this.turnOver(turnId),
      fail: (reason, detail) => this.fail(reason, detail),
    };
  }

  private fail(reason: CallFailure, detail: string): void {
    if (this.finished) return;
    const kept = this.opts.log.kept?.(detail) ?? detail; // the detail may quote a brain's frame
    log.warn("conversation failed", { session_id: this.opts.sessionId, reason, detail: kept });
    // A brain failure names the URL dialled: the agent's may have changed since (console).
    const brain = reason.startsWith("brain_") ? { brain_url: this.opts.brainUrl } : {};
    this.opts.log.add("worker", reason, { detail, ...brain });
    this.page.error(detail, true);
    this.opts.endCall("failed", reason);
  }

  /** 20 ms of the caller at 16 kHz, in the caller's order, a lost frame rebuilt or concealed. */
  onCallerFrame(pcm: Int16Array): void {
    if (this.finished) return;
    // The receiver reuses its buffer; every consumer below copies what it keeps, synchronously.
    this.opts.recording?.pushCaller(pcm);
    if (this.gate && !this.gate.hear(pcm)) return; // the callee answering, not a turn
    this.caller?.push(pcm);
  }

  /** No first unit in time: the caller may talk; the turn stays current until superseded. */
  private onReplyTimeout(turnId: string, afterMs: number): void {
    if (this.finished) return;
    const greeting = turnId === "greeting";
    const detail = greeting ? { after_ms: afterMs } : { turn_id: turnId, after_ms: afterMs };
    this.opts.log.add("worker", greeting ? "greeting_timeout" : "reply_timeout", detail);
    this.caller?.floor({ type: "reply_timeout", turnId });
  }

  private onBrainFrame(f: BrainFrame): void {
    if (this.finished) return;
    const r = readBrainFrame(f);
    if (r?.kind === "unit") this.unit(r.turnId, r.unitId, r.text, r.last);
    else if (r?.kind === "action") this.page.serverMessage(r.type, r.data);
    else if (r?.kind === "config") this.configure(r.patch as ConfigPatch);
    else if (r?.kind === "end_session") this.whenQuiet.end(r.reason);
    else if (r?.kind === "transfer") this.whenQuiet.transfer(r.target, r.whisper, r.ringTimeoutMs);
    else if (r?.kind === "say") this.say(r.sayId, r.text);
  }

  private unit(turnId: string, unitId: string, text: string, last: boolean): void {
    if (this.gate?.hold(turnId, unitId, text, last)) return this.replyTimer.clear(turnId);
    // Before the call has started no turn is open: the unit is not wanted.
    const verdict = this.issued.has(turnId)
      ? this.caller?.accept(turnId) ?? "superseded"
      : "unknown_turn";
    // A held unit (a speculative turn's) is synthesized now and plays once the turn is confirmed.
    if (verdict !== "accepted" && verdict !== "held") {
      return this.voice.drop(turnId, unitId, verdict);
    }
    this.replyTimer.clear(turnId);
    this.voice.play(turnId, unitId, text, last);
    this.idle.activity();
  }

  /** The brain's Say: refused at once unless the floor is free (media/call/say.ts). */
  private say(sayId: string, text: string): void {
    const detail = sayRefusal(text, {
      ending: this.whenQuiet.ending,
      transferring: this.whenQuiet.transferPending,
      listening: this.caller !== undefined,
      botBusy: this.voice.busy,
      maxChars: this.limits.maxQueuedChars,
    });
    if (detail) return this.brain?.send("say_refused", { say_id: sayId, detail });
    this.caller!.floor({ type: "say_requested", sayId, text });
  }

  /** A turn played out or was cut off: its latency steps to the brain, if it asked. */
  private turnOver(turnId: string): void {
    const record = this.turnLog.record(turnId);
    this.events.turnOver(record);
    this.opts.trace?.turnOver(record);
  }

  private configure(patch: ConfigPatch): void {
    const r = reconfigure(this.config, patch, this.opts.engines.serves);
    // A refused patch leaves the config in effect; the brain sees why in the session log.
    this.opts.log.add("worker", r.kind, r.detail);
    if (r.kind === "config_refused") return;
    const next = r.detail.config;
    const sttChanged = next.stt.language !== this.config.stt.language;
    this.config = next;
    this.idle.timeoutMs = next.idle.timeout_ms;
    if (this.caller) {
      this.caller.language = next.stt.language;
      this.caller.speculative = next.turns.speculative;
    }
    if (!sttChanged || !this.caller) return;
    this.caller.swapRecognition(next.stt.language).catch((err) =>
      this.opts.log.add("worker", "config_refused", { error: err.message })
    );
  }

  /** A key the caller pressed on a phone call: to the brain, as a page message would go. */
  onDtmf(d: DtmfDigit): void {
    if (this.finished) return;
    this.idle.activity();
    const body = { digit: d.digit, duration_ms: d.durationMs };
    const shown = shownDigit(d.digit, this.config.keypad.sensitive);
    this.brain?.send("dtmf", body, { ...body, digit: shown });
  }

  /** A typed turn from the page (send-text); throws when the call cannot take one yet. */
  onTypedText(text: string): void {
    if (!this.caller || this.finished) throw new Error("The call is not listening.");
    this.turnLog.typedArrived(text, now()); // the typed turn's wait starts here
    this.caller.typed(text);
  }

  /** client-message, ui-event: to the brain verbatim. */
  onPageMessage(m: RtviMessage): void {
    this.brain?.send("client_message", { json: JSON.stringify(m) });
  }

  /** The call is ending: what was playing is cut, the brain gets Finalize then End. */
  async finish(reason: string): Promise<ConversationOutcome> {
    if (!this.finished) {
      this.finished = true;
      this.gate?.stop();
      this.whenQuiet.stop();
      // What the engines did up to the end; anything settling later is not the call's.
      this.usageAtEnd = this.speech.usage.record();
      this.idle.stop();
      this.replyTimer.stop();
      this.caller?.close();
      this.voice.stop();
      if (this.brain) {
        this.brain.send("finalize", { heard: this.voice.heard.map(heardBody) });
        this.brain.send("end", { reason });
        await this.brain.close();
      }
    }
    const brainEndReason = this.whenQuiet.brainEndReason;
    return { turns: this.turnLog.records(), ...this.usageAtEnd!, brainEndReason };
  }
}
