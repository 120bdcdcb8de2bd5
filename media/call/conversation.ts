// A conversation with the customer's brain on one call: the pipeline of caller audio → VAD →
// turn-taking → recognition → brain → synthesis → speaker, and everything said about it to the
// brain (wire frames), the page (RTVI events) and the record (turns, usage, recording).
import { logger } from "../../common/log.ts";
import { OpusDecoder } from "../../wasm/opus.ts";
import { BrainConnection, BrainDialError, type BrainFrame } from "../brain/connection.ts";
import { brainLimits } from "../brain/limits.ts";
import type { Fallback, RoutedStream } from "../engines/routing.ts";
import { Speaker, type SpeechChunk, type UnitHeard } from "../speech/speaker.ts";
import { type EndOfTurnMode, type TurnAction, TurnTaking } from "../turn/turn_taking.ts";
import { DEFAULT_END_OF_TURN_BOUNDS } from "../turn/end_of_turn.ts";
import { ReplyTimer } from "../turn/reply_timer.ts";
import type { VadEvent, VoiceActivity } from "../vad/voice_activity.ts";
import type { RtviSession } from "../rtvi/session.ts";
import type { RtviMessage } from "../rtvi/protocol.ts";
import {
  applyConfig,
  type CallConfig,
  changedFields,
  type ConfigPatch,
  unservedFields,
} from "./call_config.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import type { CallRecording } from "./recording.ts";
import type { SessionLog } from "./session_log.ts";
import { TurnLog, type TurnRecord } from "./turn_record.ts";

const log = logger("conversation");

export interface ConversationOptions {
  sessionId: string;
  agentId: string;
  brainUrl: string;
  /** The session's init object (from the token), sent to the brain as is. */
  init: unknown;
  /** The effective config before the brain speaks: defaults, then the connect config. */
  config: CallConfig;
  engines: CallEngines;
  log: SessionLog;
  rtvi: RtviSession;
  recording?: CallRecording;
  /** Ends the call (the conversation's finish() is then called by the call). */
  endCall(status: "ended" | "failed", reason: string): void;
  /** VAD start window while the bot speaks (barge-in), in ms. */
  bargeInMs?: number;
  /**
   * END_OF_TURN: `adaptive` (default; the turn ends after a silence chosen from the words and the
   * caller, and speech over the bot pauses it until its words show a backchannel or a real
   * interruption) or `fixed` (the VAD's fixed silence, and any speech over the bot cancels).
   */
  endOfTurn?: EndOfTurnMode;
  /** How long the brain has to answer SessionStart with a greeting (default: brainLimits). */
  greetingTimeoutMs?: number;
  /** How long the brain has to start a reply to a turn (default: brainLimits). */
  replyTimeoutMs?: number;
}

export interface ConversationOutcome {
  turns: TurnRecord[];
  recognisedSeconds: number;
  synthesizedCharacters: number;
  /** Engine name → what it did on this call (the usage record's by_engine). */
  byEngine: EngineUsage;
}

export type EngineUsage = Record<
  string,
  { recognised_seconds?: number; synthesized_characters?: number }
>;

const now = () => performance.now();

/**
 * Silence (ms) the VAD reports as a pause in adaptive mode: recognition is finished there, so the
 * words are in before the shortest window (200 ms) closes. Five 32 ms frames.
 */
export const PAUSE_MS = 160;

export class Conversation {
  config: CallConfig;
  readonly turns: TurnTaking;
  readonly turnLog = new TurnLog();
  readonly speaker: Speaker;
  private brain?: BrainConnection;
  private vad?: VoiceActivity;
  private stt?: RoutedStream;
  private decoder = new OpusDecoder({ sampleRate: 16000 });
  private recognising = false;
  private recognisedMs = 0;
  private recognisedMsByEngine = new Map<string, number>();
  private heard: UnitHeard[] = [];
  /** Turn ids this service opened; units for any other id are dropped. */
  private issued = new Set<string>(["greeting"]);
  private botSpeaking = false;
  private lastActivity = now();
  private idleTimer?: ReturnType<typeof setInterval>;
  private replyTimer = new ReplyTimer((turnId, ms) => this.onReplyTimeout(turnId, ms));
  private endTimer?: ReturnType<typeof setTimeout>;
  private limits = { ...brainLimits };
  private ending = false;
  private finished = false;

  constructor(private opts: ConversationOptions) {
    this.config = opts.config;
    this.turns = new TurnTaking({
      mode: opts.endOfTurn ?? "adaptive",
      language: opts.config.stt.language,
    });
    this.speaker = new Speaker((text, signal) => this.synthesize(text, signal), {
      onTurnAudioStarted: (turnId) => this.onTurnAudioStarted(turnId),
      onUnitStarted: (u) => {
        this.botStartedSpeaking();
        this.botOutput(u.text, "", "new");
      },
      onProgress: (u, heard) => this.botOutput(u.text, heard, "in-progress"),
      onUnitDone: (u) => this.onUnitDone(u),
      onTurnFinished: (turnId) => {
        this.turnLog.mark(turnId, "done", now());
        this.apply(this.turns.next({ type: "reply_finished", turnId }));
      },
      onIdle: () => this.onSpeakerIdle(),
      onSynthesisError: (u, err, gotAudio) => {
        log.error("synthesis failed", {
          session_id: opts.sessionId,
          unit: u.unitId,
          cause: err.message,
        });
        opts.log.add("worker", "synthesis_error", { unit_id: u.unitId, error: err.message });
        // Every engine of the route (the last one twice) made nothing: the call has no voice.
        if (!gotAudio) this.fail("synthesis_failed", err.message);
      },
    }, { maxUnits: this.limits.maxQueuedUnits, maxChars: this.limits.maxQueuedChars });
  }

  private synthesize(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    const { voice, language } = this.config.tts;
    const onFallback = (f: Fallback) => this.onFallback(f);
    return this.opts.engines.synthesis.synthesize(text, { voice, language, signal, onFallback });
  }

  /** An engine gave up and the next of its route took over: the call goes on, the log says so. */
  private onFallback(f: Fallback): void {
    log.warn("engine fallback", { session_id: this.opts.sessionId, ...f });
    this.opts.log.add("worker", "engine_fallback", { ...f });
  }

  /** Call start: streams open, the brain is dialled and greeted. */
  async start(): Promise<void> {
    const o = this.opts;
    const [vad, stt, brain] = await Promise.allSettled([
      o.engines.vad(),
      o.engines.recognition.open(this.config.stt.language, (f) => this.onFallback(f)),
      BrainConnection.dial(o.brainUrl, o.sessionId, {
        dialTimeoutMs: this.limits.connectTimeoutMs,
        maxFrameBytes: this.limits.maxFrameBytes,
        unresponsiveMs: this.limits.unresponsiveMs,
        log: o.log,
        onFrame: (f) => this.onBrainFrame(f),
        onSilent: (detail) =>
          o.rtvi.emit("error", { error: detail, message: detail, fatal: false }),
        onViolation: (reason, detail) => this.fail(reason, detail),
        onClosed: (code) => {
          if (!this.ending) {
            this.fail("brain_disconnected", `the brain closed the socket (${code})`);
          }
        },
      }),
    ]);
    if (vad.status === "fulfilled") {
      this.vad = vad.value;
      // Adaptive: pauses go to the turn machine, which ends the turn; the VAD's own end of
      // speech is only the upper bound.
      if (this.turns.mode === "adaptive") {
        this.vad.configure({ pauseMs: PAUSE_MS, stopMs: DEFAULT_END_OF_TURN_BOUNDS.maxMs });
      }
    }
    if (stt.status === "fulfilled") this.setRecognition(stt.value);
    if (brain.status === "fulfilled") this.brain = brain.value;
    if (this.finished) {
      await this.brain?.close();
      return this.closeStreams();
    }
    const failed = [vad, stt, brain].find((r) => r.status === "rejected") as
      | PromiseRejectedResult
      | undefined;
    if (failed) {
      const err = failed.reason as Error;
      const reason = brain.status !== "rejected"
        ? "engine_unavailable"
        : err instanceof BrainDialError
        ? err.reason
        : "brain_unreachable";
      return this.fail(reason, err.message);
    }
    this.apply(this.turns.next({ type: "greeting_expected" }));
    this.turnLog.open("greeting", "greeting", now());
    this.brain!.send("session_start", {
      session_id: o.sessionId,
      agent_id: o.agentId,
      init_json: JSON.stringify(o.init ?? {}),
      config: this.config,
    });
    this.replyTimer.arm("greeting", o.greetingTimeoutMs ?? this.limits.greetingTimeoutMs);
    this.idleTimer = setInterval(() => this.checkIdle(), 100);
  }

  private setRecognition(stream: RoutedStream): void {
    this.stt = stream;
    stream.onInterim((text) => {
      if (text) this.userTranscription(text, false);
    });
  }

  private fail(reason: string, detail: string): void {
    if (this.finished) return;
    log.warn("conversation failed", { session_id: this.opts.sessionId, reason, detail });
    this.opts.log.add("worker", reason, { detail });
    this.opts.rtvi.emit("error", { error: detail, message: detail, fatal: true });
    this.opts.endCall("failed", reason);
  }

  // ── caller audio ──────────────────────────────────────────────────────────────────────────

  /** One RTP payload of the caller (Opus). */
  onCallerAudio(payload: Uint8Array): void {
    if (this.finished) return;
    let pcm: Int16Array;
    try {
      // The decoder reuses its buffer; every consumer below copies what it keeps, synchronously.
      pcm = this.decoder.decode(payload);
    } catch {
      return; // a corrupt packet is dropped; the next one decodes
    }
    this.opts.recording?.pushCaller(pcm);
    if (this.recognising) this.stt?.push(pcm);
    const vad = this.vad;
    if (!vad) return;
    // The VAD keeps every push (so audioSince() covers all audio received so far) and resolves
    // pushes in order, so events are handled in order without a chain of our own.
    vad.push(pcm).then((events) => {
      events.forEach((e) => this.onVad(e));
      // The machine's only clock is the audio's: while a pause or an overlap is open it hears
      // how far the audio has been decided.
      if (!this.finished && this.turns.needsClock) {
        this.apply(this.turns.next({ type: "audio_time", atMs: vad.processedMs }));
      }
    }, () => {});
  }

  private onVad(e: VadEvent): void {
    if (this.finished) return;
    this.lastActivity = now();
    if (e.type === "speech_start") {
      this.turnLog.utteranceStarted(now(), e.atMs - e.onsetMs);
      this.opts.log.add("worker", "speech_started", { onset_ms: e.onsetMs, at_ms: e.atMs });
      this.opts.rtvi.emit("user-started-speaking");
      this.apply(this.turns.next({ type: "speech_started", onsetMs: e.onsetMs }), e);
    } else if (e.type === "pause") {
      this.apply(
        this.turns.next({ type: "speech_paused", silenceStartMs: e.silenceStartMs, atMs: e.atMs }),
      );
    } else if (e.type === "resume") {
      this.apply(this.turns.next({ type: "speech_resumed", pauseMs: e.pauseMs }), e);
    } else if (this.turns.mode === "adaptive") {
      // The upper bound: the machine ends the turn (end_utterance says so to the log and page).
      this.apply(this.turns.next({ type: "speech_stopped" }));
    } else {
      // The speech ended where the VAD's silence run began, stopMs before it decided.
      this.turnLog.utteranceMark("speech_ended", now() - (this.vad?.settings.stopMs ?? 0));
      this.turnLog.utteranceMark("end_of_turn", now());
      this.opts.log.add("worker", "speech_stopped", { at_ms: e.atMs, speech_ms: e.speechMs });
      this.opts.rtvi.emit("user-stopped-speaking");
      this.apply(this.turns.next({ type: "speech_stopped" }));
    }
  }

  // ── turn-taking actions ───────────────────────────────────────────────────────────────────

  private apply(actions: TurnAction[], vadEvent?: VadEvent): void {
    for (const a of actions) {
      switch (a.type) {
        case "interrupt":
          this.interrupt(a.turnId);
          break;
        case "pause_bot":
          // At the frame, as a cut would be: the caller hears silence while they speak.
          this.speaker.pause();
          this.opts.log.add("worker", "bot_paused", {
            turn_id: a.turnId,
            window_ms: this.vad?.settings.startMs,
          });
          break;
        case "resume_bot":
          this.speaker.resume();
          this.opts.log.add("worker", "bot_resumed", { turn_id: a.turnId, text: a.text });
          break;
        case "end_utterance":
          if (a.vadOpen) this.vad?.endSpeech();
          if (a.words) {
            // The caller's speech ended where the silence that ended the turn began.
            this.turnLog.utteranceMark("speech_ended", now() - a.silenceMs);
            this.turnLog.utteranceMark("end_of_turn", now());
          } else this.turnLog.utteranceDropped();
          this.opts.log.add("worker", "speech_stopped", {
            silence_ms: a.silenceMs,
            window_ms: a.windowMs,
            words: a.words,
          });
          this.opts.rtvi.emit("user-stopped-speaking");
          break;
        case "start_recognition":
          if (this.stt && this.vad && vadEvent?.type === "speech_start") {
            // The recogniser hears the utterance from before its onset (Silero reacts late to weak
            // onsets such as /h/), start window included.
            this.stt.push(this.vad.audioSince(Math.max(0, vadEvent.onsetMs - 200)));
          } else if (this.stt && this.vad && vadEvent?.type === "resume") {
            // After a pause: from just before the speech came back (the pause is silence).
            this.stt.push(this.vad.audioSince(Math.max(0, vadEvent.onsetMs - 100)));
          }
          this.recognising = true;
          break;
        case "finish_recognition":
          this.recognising = false;
          this.finishRecognition();
          break;
        case "send_user_turn":
          this.issued.add(a.turnId);
          this.brain?.send("user_turn", { turn_id: a.turnId, text: a.text });
          this.turnLog.utteranceSent(a.turnId, a.text, now());
          this.armReplyTimer(a.turnId);
          break;
        case "cancel":
          this.replyTimer.clear(a.turnId);
          this.brain?.send("cancel", { turn_id: a.turnId });
          this.opts.log.add("worker", "turn_cancelled", {
            turn_id: a.turnId,
            reason: "superseded",
          });
          break;
        case "send_user_idle": {
          this.issued.add(a.turnId);
          const idleMs = Math.round(now() - this.lastActivity);
          this.turnLog.open(a.turnId, "idle", now());
          this.turnLog.mark(a.turnId, "user_turn_sent", now());
          this.brain?.send("user_idle", { idle_ms: idleMs, turn_id: a.turnId });
          this.lastActivity = now();
          this.armReplyTimer(a.turnId);
          break;
        }
      }
    }
  }

  private finishRecognition(): void {
    const stt = this.stt;
    if (!stt) return;
    this.turnLog.utteranceMark("final_requested", now());
    stt.finish().then(({ text, audioMs, engine }) => {
      if (this.finished) return;
      this.recognisedMs += audioMs;
      this.recognisedMsByEngine.set(engine, (this.recognisedMsByEngine.get(engine) ?? 0) + audioMs);
      const clean = text.trim();
      this.turnLog.utteranceMark("final_text", now());
      this.turnLog.utteranceRecognisedBy(engine);
      this.opts.log.add("worker", "final_text", { text: clean, audio_ms: audioMs, engine });
      if (clean) this.userTranscription(clean, true);
      // Adaptive: a pause's words may be empty and the caller go on; end_utterance drops it.
      else if (this.turns.mode === "fixed") this.turnLog.utteranceDropped();
      this.apply(this.turns.next({ type: "final_text", text: clean }));
    }, (err) => {
      if (this.finished) return;
      // Every engine of the route failed, the last one opened afresh too: the call is deaf.
      log.error("recognition failed", { session_id: this.opts.sessionId, cause: err.message });
      this.turnLog.utteranceDropped();
      this.fail("recognition_failed", err.message);
    });
  }

  private armReplyTimer(turnId: string): void {
    this.replyTimer.arm(turnId, this.opts.replyTimeoutMs ?? this.limits.replyTimeoutMs);
  }

  /** No first unit in time: the caller may talk; the turn stays current until superseded. */
  private onReplyTimeout(turnId: string, afterMs: number): void {
    if (this.finished) return;
    if (turnId === "greeting") {
      this.opts.log.add("worker", "greeting_timeout", { after_ms: afterMs });
    } else this.opts.log.add("worker", "reply_timeout", { turn_id: turnId, after_ms: afterMs });
    this.apply(this.turns.next({ type: "reply_timeout", turnId }));
  }

  /** Barge-in: the bot stops at the next frame, the brain is told, later units are dropped. */
  private interrupt(turnId: string): void {
    const windowMs = this.vad?.settings.startMs;
    this.speaker.cutOff(turnId);
    // A pause held for the overlap ends with the cut (other turns' speech may still be queued).
    this.speaker.resume();
    this.replyTimer.clear(turnId);
    this.turnLog.interrupted(turnId);
    this.brain?.send("cancel", { turn_id: turnId });
    this.opts.log.add("worker", "barge_in", { turn_id: turnId, window_ms: windowMs });
  }

  // ── the brain ─────────────────────────────────────────────────────────────────────────────

  private onBrainFrame(f: BrainFrame): void {
    if (this.finished) return;
    const b = f.body;
    switch (f.kind) {
      case "greeting":
        this.unit("greeting", "greeting", String(b.text ?? ""), true);
        break;
      case "speech_unit":
        this.unit(String(b.turn_id), String(b.unit_id), String(b.text ?? ""), Boolean(b.last));
        break;
      case "action": {
        let data: unknown = null;
        try {
          data = b.json ? JSON.parse(b.json) : null;
        } catch {
          data = b.json; // not JSON: delivered as the text it is
        }
        this.opts.rtvi.emit("server-message", { type: b.type, data });
        break;
      }
      case "config":
        this.configure(b as ConfigPatch);
        break;
      case "end_session":
        this.endWhenQuiet(String(b.reason || "brain_ended"));
        break;
    }
  }

  private unit(turnId: string, unitId: string, text: string, last: boolean): void {
    const verdict = this.issued.has(turnId) ? this.turns.accept(turnId) : "unknown_turn";
    if (verdict !== "accepted") {
      this.opts.log.add("worker", "unit_dropped", {
        turn_id: turnId,
        unit_id: unitId,
        reason: verdict,
      });
      return;
    }
    this.replyTimer.clear(turnId);
    this.lastActivity = now();
    this.turnLog.mark(turnId, "first_unit", now());
    if (!this.speaker.enqueue({ turnId, unitId, text }, last)) {
      const { units, chars } = this.speaker.queued;
      this.opts.log.add("worker", "unit_refused", {
        turn_id: turnId,
        unit_id: unitId,
        reason: "queue_full",
        queued_units: units,
        queued_chars: chars,
      });
    }
  }

  private configure(patch: ConfigPatch): void {
    const next = applyConfig(this.config, patch);
    const refused = unservedFields(next, this.opts.engines.serves);
    if (refused.length) {
      // The call goes on in the config in effect; the brain sees why in the session log.
      this.opts.log.add("worker", "config_refused", { fields: refused, config: patch });
      return;
    }
    const changed = changedFields(this.config, next);
    const sttChanged = next.stt.language !== this.config.stt.language;
    this.config = next;
    this.turns.language = next.stt.language;
    this.opts.log.add("worker", "config_applied", { changed, config: next });
    if (sttChanged) {
      const old = this.stt;
      this.opts.engines.recognition.open(next.stt.language, (f) => this.onFallback(f)).then((s) => {
        if (this.finished) return s.close();
        this.setRecognition(s);
        old?.close();
      }, (err) => this.opts.log.add("worker", "config_refused", { error: err.message }));
    }
  }

  private endWhenQuiet(reason: string): void {
    if (this.ending) return;
    this.ending = true;
    this.opts.log.add("worker", "end_requested", { reason });
    if (!this.speaker.busy) this.opts.endCall("ended", "brain_ended");
    else this.endTimer = setTimeout(() => this.opts.endCall("ended", "brain_ended"), 15_000);
  }

  // ── the bot's voice ───────────────────────────────────────────────────────────────────────

  private onTurnAudioStarted(turnId: string): void {
    this.turnLog.mark(turnId, "first_audio", now());
    this.apply(this.turns.next({ type: "playback_started", turnId }));
  }

  /** The bot's voice started (again): the VAD listens with the short barge-in window. */
  private botStartedSpeaking(): void {
    if (this.botSpeaking) return;
    this.botSpeaking = true;
    this.opts.rtvi.emit("bot-started-speaking");
    this.vad?.setStartMs(this.opts.bargeInMs ?? 64);
  }

  private onUnitDone(u: UnitHeard): void {
    this.heard.push(u);
    this.turnLog.unitDone(u.turnId, {
      unit_id: u.unitId,
      text: u.text,
      heard: u.heard,
      cut_off: u.cutOff,
      ...(u.engine ? { engine: u.engine } : {}),
      ...(u.estimated ? { heard_estimated: true } : {}),
    });
    this.brain?.send("heard", {
      unit_id: u.unitId,
      turn_id: u.turnId,
      text: u.heard,
      cut_off: u.cutOff,
    });
    this.botOutput(u.text, u.heard, "completed");
  }

  private onSpeakerIdle(): void {
    this.lastActivity = now();
    if (this.botSpeaking) {
      this.botSpeaking = false;
      this.opts.rtvi.emit("bot-stopped-speaking");
      this.vad?.setStartMs(200);
    }
    if (this.ending) this.opts.endCall("ended", "brain_ended");
  }

  private checkIdle(): void {
    const idle = this.config.idle.timeout_ms;
    if (idle <= 0 || this.finished || this.ending) return;
    if (this.turns.state !== "listening" || this.speaker.busy || this.vad?.inSpeech) {
      this.lastActivity = now();
      return;
    }
    if (now() - this.lastActivity >= idle) {
      this.apply(this.turns.next({ type: "idle_elapsed" }));
    }
  }

  // ── the page ──────────────────────────────────────────────────────────────────────────────

  /** client-message, send-text, ui-event: to the brain verbatim. */
  onPageMessage(m: RtviMessage): void {
    this.brain?.send("client_message", { json: JSON.stringify(m) });
  }

  private userTranscription(text: string, final: boolean): void {
    this.opts.rtvi.emit("user-transcription", {
      text,
      final,
      timestamp: new Date().toISOString(),
      user_id: "",
    });
  }

  private botOutput(text: string, heard: string, status: "new" | "in-progress" | "completed") {
    this.opts.rtvi.emit("bot-output", {
      text,
      aggregated_by: "sentence",
      will_be_spoken: true,
      spoken_status: status,
      spoken_progress: { accumulated_text: heard, remaining_text: text.slice(heard.length) },
    });
  }

  // ── the end ───────────────────────────────────────────────────────────────────────────────

  /** The call is ending: what was playing is cut, the brain gets Finalize then End. */
  async finish(reason: string): Promise<ConversationOutcome> {
    if (!this.finished) {
      this.finished = true;
      this.ending = true;
      clearInterval(this.idleTimer);
      clearTimeout(this.endTimer);
      this.replyTimer.stop();
      this.speaker.cutOff();
      if (this.brain) {
        this.brain.send("finalize", {
          heard: this.heard.map((u) => ({
            unit_id: u.unitId,
            turn_id: u.turnId,
            text: u.heard,
            cut_off: u.cutOff,
          })),
        });
        this.brain.send("end", { reason });
        await this.brain.close();
      }
      this.closeStreams();
    }
    const byEngine: EngineUsage = {};
    for (const [engine, ms] of this.recognisedMsByEngine) {
      (byEngine[engine] ??= {}).recognised_seconds = ms / 1000;
    }
    for (const [engine, n] of this.speaker.charactersByEngine) {
      (byEngine[engine] ??= {}).synthesized_characters = n;
    }
    return {
      turns: this.turnLog.records(),
      recognisedSeconds: this.recognisedMs / 1000,
      synthesizedCharacters: this.speaker.synthesizedCharacters,
      byEngine,
    };
  }

  private streamsClosed = false;

  private closeStreams(): void {
    if (this.streamsClosed) return;
    this.streamsClosed = true;
    this.stt?.close();
    this.vad?.close();
    this.decoder.close();
  }
}
