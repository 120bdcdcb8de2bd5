// A conversation with the customer's brain on one call; it wires the stages and holds no tuning:
// caller Opus, decoded here → the caller's audio (media/caller_audio/) → the brain → the bot's
// voice (bot_voice.ts); the page hears of it through the RTVI observer, idle is its own stage
// (media/turn/idle.ts), usage is counted by the engines' routers. docs/decisions.md "Call flow".
import { logger } from "../../common/log.ts";
import type { CallFailure } from "../../common/session_events.ts";
import { BrainConnection, type BrainFrame, dialFailure } from "../brain/connection.ts";
import { heardBody, readBrainFrame } from "../brain/frames.ts";
import { brainLimits } from "../brain/limits.ts";
import { CallerAudio, type CallerHooks } from "../caller_audio/caller_audio.ts";
import { CallUsage, type Fallback, type UsageRecord } from "../engines/routing.ts";
import type { Speaker } from "../speech/speaker.ts";
import { IdleStage } from "../turn/idle.ts";
import { ReplyTimer } from "../turn/reply_timer.ts";
import type { RtviMessage } from "../rtvi/protocol.ts";
import { RtviObserver } from "../rtvi/observer.ts";
import { type CallConfig, type ConfigPatch, reconfigure } from "./call_config.ts";
import { BotVoice, PLAY_OUT_MS } from "./bot_voice.ts";
import type { ConversationOptions, ConversationOutcome } from "./conversation_options.ts";
import { TurnLog } from "./turn_record.ts";
import { transferRefusal } from "./transfer.ts";
import { BrainEvents } from "./brain_events.ts";
import { sayRefusal, sayUnitId } from "./say.ts";
import type { DtmfDigit } from "../phone/line.ts";

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
  private usage = new CallUsage();
  private usageAtEnd?: UsageRecord;
  /** Turn ids this service opened; units for any other id are dropped. */
  private issued = new Set<string>(["greeting"]);
  private replyTimer = new ReplyTimer((turnId, ms) => this.onReplyTimeout(turnId, ms));
  private endTimer?: ReturnType<typeof setTimeout>;
  private limits = { ...brainLimits };
  private ending = false;
  /** The brain's own reason for ending: the record keeps it beside the service's. */
  private brainEndReason?: string;
  private finished = false;
  /** The brain's Transfer waiting for the bot to finish what it says, or being carried out. */
  private transferring?: { target: string; underWay: boolean };
  /** Caller events and turn metrics, as far as the brain asked for them (config.events). */
  private events = new BrainEvents(
    (kind, body) => this.brain?.send(kind, body),
    () => this.config.events,
  );
  /** Bounds the wait for the bot to fall quiet before a transfer (cleared at the start or end). */
  private transferTimer?: ReturnType<typeof setTimeout>;

  constructor(private opts: ConversationOptions) {
    this.config = opts.config;
    this.page = new RtviObserver(opts.rtvi);
    this.voice = new BotVoice({
      sessionId: opts.sessionId,
      synthesize: (text, signal) => {
        const { voice, language } = this.config.tts;
        const options = { voice, language, signal, onFallback: this.onFallback, usage: this.usage };
        return opts.engines.synthesis.synthesize(text, options);
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
          if (this.ending) this.opts.endCall("ended", "brain_ended");
          else if (this.transferring) void this.transferNow();
        },
        onVoiceless: (err) => this.fail("synthesis_failed", err.message),
      },
    });
    this.speaker = this.voice.speaker;
  }

  /** Nobody speaks, nothing plays, no reply is awaited: the idle stage times this. */
  private get quiet(): boolean {
    return !this.ending && !this.voice.busy && (this.caller?.listening ?? false);
  }

  private openRecognition(language: string) {
    const { recognition } = this.opts.engines;
    return recognition.open(language, this.onFallback, this.usage, this.opts.channel);
  }

  /** An engine gave up and the next of its route took over: the call goes on, the log says so. */
  private onFallback = (f: Fallback): void => {
    log.warn("engine fallback", { session_id: this.opts.sessionId, ...f });
    this.opts.log.add("worker", "engine_fallback", { ...f });
  };

  /** Call start: streams open, the brain is dialled and greeted. */
  async start(): Promise<void> {
    const o = this.opts;
    const [vad, stt, brain] = await Promise.allSettled([
      o.engines.vad(),
      this.openRecognition(this.config.stt.language),
      BrainConnection.dial(o.brainUrl, o.sessionId, {
        dialTimeoutMs: this.limits.connectTimeoutMs,
        maxFrameBytes: this.limits.maxFrameBytes,
        unresponsiveMs: this.limits.unresponsiveMs,
        log: o.log,
        onFrame: (f) => this.onBrainFrame(f),
        onSilent: (detail) => this.page.error(detail, false),
        onViolation: (reason, detail) => this.fail(reason, detail),
        onClosed: (code) => {
          if (!this.ending) {
            this.fail("brain_disconnected", `the brain closed the socket (${code})`);
          }
        },
      }),
    ]);
    if (brain.status === "fulfilled") this.brain = brain.value;
    if (vad.status === "fulfilled" && stt.status === "fulfilled" && !this.finished) {
      this.caller = new CallerAudio({
        vad: vad.value,
        recognition: stt.value,
        openRecognition: (language) => this.openRecognition(language),
        language: this.config.stt.language,
        mode: o.endOfTurn,
        bargeInMs: o.bargeInMs,
        noiseSuppression: o.noiseSuppression,
        hooks: this.callerHooks(),
        record: this.turnLog,
        log: o.log,
      });
    } else {
      if (vad.status === "fulfilled") vad.value.close();
      if (stt.status === "fulfilled") stt.value.close();
    }
    if (this.finished) return await this.brain?.close();
    const failed = [vad, stt, brain].find((r) => r.status === "rejected");
    if (failed?.status === "rejected") {
      const err = failed.reason as Error;
      const reason = brain.status === "rejected" ? dialFailure(err) : "engine_unavailable";
      return this.fail(reason, err.message);
    }
    this.caller!.floor({ type: "greeting_expected" });
    this.turnLog.open("greeting", "greeting", now());
    this.brain!.send("session_start", {
      session_id: o.sessionId,
      agent_id: o.agentId,
      init_json: JSON.stringify(o.init ?? {}),
      config: this.config,
      ...(o.phone ? { phone: o.phone } : {}),
    });
    this.replyTimer.arm("greeting", o.greetingTimeoutMs ?? this.limits.greetingTimeoutMs);
    this.idle.timeoutMs = this.config.idle.timeout_ms;
  }

  /** What the caller's audio asks of the call. */
  private callerHooks(): CallerHooks {
    const o = this.opts;
    return {
      onSpeechStarted: () => {
        this.page.userStartedSpeaking();
        this.events.speechStarted(this.voice.busy);
      },
      onSpeechStopped: () => {
        this.page.userStoppedSpeaking();
        this.events.speechStopped();
      },
      onInterimText: (text) => {
        this.page.userTranscription(text, false);
        this.events.interim(text);
      },
      onFinalText: (text) => this.page.userTranscription(text, true),
      onActivity: () => this.idle.activity(),
      onFloorChanged: () => this.idle.check(),
      onUserTurn: (turnId, text, typed) => {
        this.issued.add(turnId);
        // The page shows a typed turn in its transcript as it does a spoken one (docs/decisions.md).
        if (typed) this.page.userTranscription(text, true);
        this.brain?.send("user_turn", { turn_id: turnId, text, typed });
        this.armReplyTimer(turnId);
      },
      onUserIdle: (turnId) => {
        this.issued.add(turnId);
        this.turnLog.open(turnId, "idle", now());
        this.turnLog.mark(turnId, "user_turn_sent", now());
        this.brain?.send("user_idle", { idle_ms: this.idle.quietMs, turn_id: turnId });
        this.idle.activity();
        this.armReplyTimer(turnId);
      },
      pauseBot: (turnId, windowMs) => this.voice.pause(turnId, windowMs),
      resumeBot: (turnId, text) => this.voice.resume(turnId, text),
      interruptBot: (turnId, windowMs, typed) => {
        // Barge-in: the bot stops at the next frame, the brain is told, later units are dropped.
        this.voice.cut(turnId);
        this.replyTimer.clear(turnId);
        this.brain?.send("cancel", { turn_id: turnId });
        const how = typed ? { typed: true } : { window_ms: windowMs };
        o.log.add("worker", "barge_in", { turn_id: turnId, ...how });
        this.turnOver(turnId);
      },
      cancelTurn: (turnId) => {
        this.replyTimer.clear(turnId);
        this.brain?.send("cancel", { turn_id: turnId });
        o.log.add("worker", "turn_cancelled", { turn_id: turnId, reason: "superseded" });
      },
      onSay: (turnId, sayId, text) => {
        this.issued.add(turnId);
        this.turnLog.open(turnId, "say", now());
        this.brain?.send("say_started", { say_id: sayId, turn_id: turnId });
        this.unit(turnId, sayUnitId(sayId, turnId), text, true);
      },
      onSayRefused: (sayId, detail) => this.brain?.send("say_refused", { say_id: sayId, detail }),
      onRecognitionFailed: (err) => {
        // Every engine of the route failed, the last one opened afresh too: the call is deaf.
        log.error("recognition failed", { session_id: o.sessionId, cause: err.message });
        this.fail("recognition_failed", err.message);
      },
      onVadFailed: (err) => {
        // Without the VAD no turn starts or ends, and barge-in is gone: the call cannot go on.
        log.error("vad failed", { session_id: o.sessionId, cause: err.message });
        this.fail("vad_failed", err.message);
      },
    };
  }

  private fail(reason: CallFailure, detail: string): void {
    if (this.finished) return;
    log.warn("conversation failed", { session_id: this.opts.sessionId, reason, detail });
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
    this.caller?.push(pcm);
  }

  private armReplyTimer(turnId: string): void {
    this.replyTimer.arm(turnId, this.opts.replyTimeoutMs ?? this.limits.replyTimeoutMs);
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
    else if (r?.kind === "end_session") this.endWhenQuiet(r.reason);
    else if (r?.kind === "transfer") this.transferWhenQuiet(r.target);
    else if (r?.kind === "say") this.say(r.sayId, r.text);
  }

  private unit(turnId: string, unitId: string, text: string, last: boolean): void {
    // Before the call has started no turn is open: the unit is not wanted.
    const verdict = this.issued.has(turnId)
      ? this.caller?.accept(turnId) ?? "superseded"
      : "unknown_turn";
    if (verdict !== "accepted") return this.voice.drop(turnId, unitId, verdict);
    this.replyTimer.clear(turnId);
    this.voice.play(turnId, unitId, text, last);
    this.idle.activity();
  }

  /** The brain's Say: refused at once unless the floor is free (media/call/say.ts). */
  private say(sayId: string, text: string): void {
    const detail = sayRefusal(text, {
      ending: this.ending,
      transferring: this.transferring !== undefined,
      listening: this.caller !== undefined,
      botBusy: this.voice.busy,
      maxChars: this.limits.maxQueuedChars,
    });
    if (detail) return this.brain?.send("say_refused", { say_id: sayId, detail });
    this.caller!.floor({ type: "say_requested", sayId, text });
  }

  /** A turn played out or was cut off: its latency steps to the brain, if it asked. */
  private turnOver(turnId: string): void {
    this.events.turnOver(this.turnLog.record(turnId));
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
    if (this.caller) this.caller.language = next.stt.language;
    if (!sttChanged || !this.caller) return;
    this.caller.swapRecognition(next.stt.language).catch((err) =>
      this.opts.log.add("worker", "config_refused", { error: err.message })
    );
  }

  private endWhenQuiet(reason: string): void {
    if (this.ending) return;
    this.ending = true;
    this.brainEndReason = reason;
    this.opts.log.add("worker", "end_requested", { reason });
    if (!this.voice.busy) this.opts.endCall("ended", "brain_ended");
    else this.endTimer = setTimeout(() => this.opts.endCall("ended", "brain_ended"), PLAY_OUT_MS);
  }

  /**
   * The brain's Transfer: refused at once where it cannot be done (a web call, a bad target, one
   * already under way); otherwise carried out once the bot has said what it was saying ("I'll put
   * you through"), bounded as an EndSession's play-out is.
   */
  private transferWhenQuiet(target: string): void {
    const refusal = transferRefusal(target, this.opts.transfer !== undefined, !!this.transferring);
    if (refusal) {
      this.opts.log.add("worker", "transfer_refused", { target, detail: refusal });
      this.brain?.send("transfer_failed", { target, detail: refusal });
      return;
    }
    this.opts.log.add("worker", "transfer_requested", { target });
    const pending = this.transferring = { target, underWay: false };
    if (!this.voice.busy) return void this.transferNow();
    // The bot's onIdle starts it when it falls quiet; this bounds the wait.
    this.transferTimer = setTimeout(
      () => this.transferring === pending && void this.transferNow(),
      PLAY_OUT_MS,
    );
  }

  private async transferNow(): Promise<void> {
    const t = this.transferring;
    if (!t || t.underWay || this.finished || this.ending) return;
    t.underWay = true;
    clearTimeout(this.transferTimer);
    const result = await this.opts.transfer!(t.target).catch((err) => ({
      ok: false,
      detail: (err as Error).message,
    }));
    this.transferring = undefined;
    if (this.finished) return;
    if (result.ok) {
      this.opts.log.add("worker", "transferred", { target: t.target, detail: result.detail });
      this.opts.endCall("ended", "transferred");
      return;
    }
    this.opts.log.add("worker", "transfer_failed", { target: t.target, detail: result.detail });
    this.brain?.send("transfer_failed", { target: t.target, detail: result.detail });
  }

  /** A key the caller pressed on a phone call: to the brain, as a page message would go. */
  onDtmf(d: DtmfDigit): void {
    if (this.finished) return;
    this.idle.activity();
    this.brain?.send("dtmf", { digit: d.digit, duration_ms: d.durationMs });
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
      this.ending = true;
      // What the engines did up to the end; anything settling later is not the call's.
      this.usageAtEnd = this.usage.record();
      this.idle.stop();
      clearTimeout(this.endTimer);
      clearTimeout(this.transferTimer);
      this.replyTimer.stop();
      this.caller?.close();
      this.voice.stop();
      if (this.brain) {
        this.brain.send("finalize", { heard: this.voice.heard.map(heardBody) });
        this.brain.send("end", { reason });
        await this.brain.close();
      }
    }
    const brainEndReason = this.brainEndReason;
    return { turns: this.turnLog.records(), ...this.usageAtEnd!, brainEndReason };
  }
}
