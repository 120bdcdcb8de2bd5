// The caller's audio as one stage (LiveKit agents' AudioRecognition with its RecognitionHooks):
// decoded 16 kHz frames go in, the caller's events come out through hooks. Inside: the VAD, the
// recognition stream (swapped on a language change) and the turn-taking machine
// (media/turn/turn_taking.ts, kept pure: this unit gives it events and carries out its actions).
//
// Audio flows one way: push() → the pre-roll ring and, while an utterance is recognised, the
// recogniser; → the VAD, whose events drive the machine. At an onset the recogniser is fed from
// the unit's own pre-roll (Silero decides late on weak onsets such as /h/), never from the VAD.
// The VAD is steered from one place (#steer): adaptive settings, the end of an utterance the
// machine ended, and the short start window while the bot speaks (barge-in) and back.
//
// What concerns the call (the brain, the bot's voice, the page) goes out through CallerHooks;
// what the caller's utterance was goes to the session log and the utterance's turn record here.
import type { RoutedStream } from "../engines/routing.ts";
import { DEFAULT_END_OF_TURN_BOUNDS, EndOfTurnPolicy } from "../turn/end_of_turn.ts";
import {
  PATIENCE_SCALE,
  type TurnSensitivity,
  turnSensitivityOf,
  YIELDING,
} from "../../common/turn_sensitivity.ts";
import {
  type EndOfTurnMode,
  type TurnAction,
  type TurnEvent,
  TurnTaking,
  type UnitVerdict,
} from "../turn/turn_taking.ts";
import type { VadEvent, VoiceActivity } from "../vad/voice_activity.ts";
import type { NoiseSuppression } from "../../common/noise_suppression.ts";
import type { SessionEventWriter } from "../../common/session_events.ts";
import { NoiseSuppressor } from "./noise_suppressor.ts";
import { PreRoll } from "./pre_roll.ts";
import { ProsodyTrack } from "../turn/prosody.ts";

/**
 * Silence (ms) the VAD reports as a pause in adaptive mode: recognition is finished there, so the
 * words are in before the shortest window (200 ms) closes. Five 32 ms frames.
 */
export const PAUSE_MS = 160;
/** The recogniser hears an utterance from this long before the VAD's onset. */
export const ONSET_PRE_ROLL_MS = 200;
/** After a pause, from this long before the speech came back (the pause itself is silence). */
export const RESUME_PRE_ROLL_MS = 100;
/** The VAD's start window while the bot speaks: the barge-in window. */
export const BARGE_IN_START_MS = 64;
/** The VAD's start window otherwise. */
export const LISTENING_START_MS = 200;
/** How far back the pre-roll reaches: the VAD may lag the audio pushed under load. */
const PRE_ROLL_KEEP_MS = 2000;

/** What the call does with the caller's events. */
export interface CallerHooks {
  /** A new utterance began (not speech coming back after a pause). */
  onSpeechStarted(): void;
  /** The caller's utterance is over. */
  onSpeechStopped(): void;
  onInterimText(text: string): void;
  /** The final words of an utterance (never empty). */
  onFinalText(text: string): void;
  /** The VAD reported something: the caller is there. */
  onActivity(): void;
  /** The turn machine's state changed (who holds the floor). */
  onFloorChanged(): void;
  /**
   * End of turn: the words go to the brain as turn `turnId` (typed: the page's send-text;
   * speculative: the caller only paused, its reply is held until onTurnConfirmed).
   */
  onUserTurn(turnId: string, text: string, typed: boolean, speculative?: boolean): void;
  /** The speculative turn's window closed on its words: TurnConfirmed, its held reply plays. */
  onTurnConfirmed?(turnId: string): void;
  /** The caller went on before the speculative turn's window closed: Cancel, drop its reply. */
  onSpeculationDropped?(turnId: string): void;
  /** Nobody spoke for the idle timeout: the brain gets the floor on turn `turnId`. */
  onUserIdle(turnId: string): void;
  /** The brain's Say has the floor as turn `turnId`. */
  onSay?(turnId: string, sayId: string, text: string): void;
  /** The brain's Say was refused (the floor is not free); nothing changed. */
  onSayRefused?(sayId: string, detail: string): void;
  /** Speech over the bot: hold its audio (windowMs: the VAD start window that let it in). */
  pauseBot(turnId: string, windowMs: number): void;
  /** That was a backchannel or noise: the bot plays on. */
  resumeBot(turnId: string, text: string): void;
  /** Barge-in: the bot's turn is cut (typed: by a typed turn, no VAD window let it in). */
  interruptBot(turnId: string, windowMs: number, typed: boolean): void;
  /** A timed-out turn was superseded before its reply came. */
  cancelTurn(turnId: string): void;
  /** Every engine of the route failed: the call cannot hear. */
  onRecognitionFailed(err: Error): void;
  /** The VAD failed on the caller's audio (told once): the call cannot tell who speaks. */
  onVadFailed(err: Error): void;
}

/** The marks of the caller's utterance in progress (media/call/turn_record.ts's TurnLog). */
export interface UtteranceRecord {
  utteranceStarted(now: number, agoMs?: number): void;
  utteranceMark(
    name: "speech_ended" | "end_of_turn" | "final_requested" | "final_text",
    now: number,
  ): void;
  utteranceRecognisedBy(engine: string): void;
  utteranceSent(id: string, text: string, now: number): void;
  utteranceDropped(): void;
  /** A typed turn `id` with `text`, sent now (no utterance: nobody spoke it). */
  typedSent(id: string, text: string, now: number): void;
  /** The utterance so far went as speculative turn `id`; the caller may still go on. */
  utteranceSpeculated?(id: string, text: string, now: number): void;
  /** ... and its window closed on those words: the utterance is that turn. */
  utteranceConfirmed?(id: string, now: number): void;
  /** ... or the caller went on: that turn is no turn of the call. */
  speculationDropped?(id: string): void;
}

export interface CallerAudioOptions {
  vad: VoiceActivity;
  recognition: RoutedStream;
  /** Opens the recognition stream for another language (a config change). */
  openRecognition(language: string): Promise<RoutedStream>;
  /** The caller's language (the turn machine's lexicon and windows follow it). */
  language: string;
  /** Default adaptive (see turn_taking.ts). */
  mode?: EndOfTurnMode;
  /** The call's noise suppressor (agent_input.pipeline.noise_suppression); default off. */
  noiseSuppression?: NoiseSuppression;
  /** The VAD start window while the bot speaks (default: the interruption sensitivity's). */
  bargeInMs?: number;
  /** The agent's (or the call's) interruption sensitivity and turn patience; default medium. */
  sensitivity?: Required<TurnSensitivity>;
  /** Adaptive: a pause's words go to the brain before the window closes (Config.turns). */
  speculative?: boolean;
  /** The end-of-turn policy's voice rules, when not its defaults (the turn bench's variants). */
  endOfTurn?: Partial<
    Pick<
      EndOfTurnPolicy,
      | "prosody"
      | "numberGroups"
      | "unfinishedFactor"
      | "endCue"
      | "phoneNumbers"
      | "hesitantMs"
      | "hangingSpeculation"
    >
  >;
  hooks: CallerHooks;
  record: UtteranceRecord;
  log: SessionEventWriter;
}

/** The call's own events for the turn machine (the caller's come from the audio). */
export type FloorEvent = Extract<
  TurnEvent,
  {
    type:
      | "greeting_expected"
      | "playback_started"
      | "reply_finished"
      | "reply_timeout"
      | "idle_elapsed"
      | "say_requested";
  }
>;

type Steer = "adaptive" | "end_speech" | "bot_speaking" | "bot_quiet";

const now = () => performance.now();

export class CallerAudio {
  readonly #turns: TurnTaking;
  readonly #vad: VoiceActivity;
  #stt: RoutedStream;
  readonly #preRoll = new PreRoll(PRE_ROLL_KEEP_MS);
  /** Adaptive: the caller's pitch and syllables, read at each pause (turn/prosody.ts). */
  #prosody?: ProsodyTrack;
  readonly #hooks: CallerHooks;
  readonly #record: UtteranceRecord;
  readonly #log: SessionEventWriter;
  /** Runs before everything else: the pre-roll, the recogniser and the VAD hear its output. */
  readonly #denoiser?: NoiseSuppressor;
  readonly #bargeInMs: number;
  #recognising = false;
  #closed = false;
  #vadFailed = false;

  constructor(private opts: CallerAudioOptions) {
    const { interruption_sensitivity, turn_patience } = opts.sensitivity ?? turnSensitivityOf({});
    const yielding = YIELDING[interruption_sensitivity];
    this.#turns = new TurnTaking({
      mode: opts.mode ?? "adaptive",
      language: opts.language,
      policy: Object.assign(
        new EndOfTurnPolicy(opts.language, { scale: PATIENCE_SCALE[turn_patience] }),
        opts.endOfTurn,
      ),
      overlapMaxMs: yielding.overlapMaxMs,
      ignoreBackchannels: yielding.ignoreBackchannels,
      speculative: opts.speculative,
    });
    this.#bargeInMs = opts.bargeInMs ?? yielding.bargeInMs;
    this.#vad = opts.vad;
    this.#hooks = opts.hooks;
    this.#record = opts.record;
    this.#log = opts.log;
    if (opts.noiseSuppression === "rnnoise") this.#denoiser = new NoiseSuppressor();
    this.#stt = this.#listen(opts.recognition);
    // Adaptive: pauses go to the turn machine, which ends the turn; the VAD's own end of speech
    // is only the upper bound.
    if (this.#turns.mode === "adaptive") {
      this.#steer("adaptive");
      this.#prosody = new ProsodyTrack();
    }
  }

  get mode(): EndOfTurnMode {
    return this.#turns.mode;
  }

  /** The floor is free: nobody speaks and no reply is awaited or playing on the machine's side. */
  get listening(): boolean {
    return this.#turns.state === "listening" && !this.#vad.inSpeech;
  }

  /**
   * One frame of the caller's audio, 16 kHz mono (copied before this returns). Resolves once the
   * VAD's events for it have been acted on (a caller may pace its pushes on it; a call does not).
   */
  push(frame: Int16Array): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const pcm = this.#denoiser ? this.#denoiser.process(frame) : frame;
    this.#preRoll.push(pcm);
    this.#prosody?.push(pcm);
    if (this.#recognising) this.#stt.push(pcm);
    const vad = this.#vad;
    // The VAD resolves pushes in order, so events are handled in order without a chain of ours.
    return vad.push(pcm).then((events) => {
      events.forEach((e) => this.#onVad(e));
      // The machine's only clock is the audio's: while a pause or an overlap is open it hears
      // how far the audio has been decided.
      if (!this.#closed && this.#turns.needsClock) {
        this.#step({ type: "audio_time", atMs: vad.processedMs });
      }
    }, (err) => this.#onVadFailure(err));
  }

  /**
   * A push the VAD could not decide: its frames are lost to turn-taking, so the machine's view of
   * the floor is wrong from here on. The call is told once; pushes after close are not failures.
   */
  #onVadFailure(err: unknown): void {
    if (this.#closed || this.#vadFailed) return;
    this.#vadFailed = true;
    this.#hooks.onVadFailed(err instanceof Error ? err : new Error(String(err)));
  }

  /** Something on the call's side of the floor happened (greeting, reply, idle, the brain's Say). */
  floor(event: FloorEvent): void {
    if (!this.#closed) this.#step(event);
  }

  /**
   * The caller typed a turn on the page (send-text): it goes to the brain now, over the bot, or
   * once the caller's own utterance in progress is settled (turn_taking.ts, "TYPED TURNS").
   */
  typed(text: string): void {
    const clean = text.trim();
    if (this.#closed || !clean) return;
    this.#hooks.onActivity();
    this.#log.add("worker", "typed_text", { text: clean });
    this.#step({ type: "typed_text", text: clean });
  }

  /** A unit of `turnId` arrived from the brain: whether it is spoken (turn_taking.ts). */
  accept(turnId: string): UnitVerdict {
    return this.#turns.accept(turnId);
  }

  /** The bot's voice started or stopped: the VAD's start window follows (barge-in). */
  botSpeaking(on: boolean): void {
    this.#steer(on ? "bot_speaking" : "bot_quiet");
  }

  /** The brain turned speculative turns on or off (Config.turns): from the next pause on. */
  set speculative(on: boolean) {
    this.#turns.speculative = on;
  }

  /** The caller's language changed: the lexicon and windows follow at once. */
  set language(language: string) {
    this.#turns.language = language;
  }

  /** Recognition moves to a stream for `language`; the old one is closed once it is open. */
  async swapRecognition(language: string): Promise<void> {
    const next = await this.opts.openRecognition(language);
    if (this.#closed) return next.close();
    const old = this.#stt;
    this.#stt = this.#listen(next);
    old.close();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stt.close();
    this.#vad.close();
    this.#denoiser?.close();
  }

  #listen(stream: RoutedStream): RoutedStream {
    stream.onInterim((text) => {
      if (text && !this.#closed) this.#hooks.onInterimText(text);
    });
    return stream;
  }

  /** The one place the VAD is steered. */
  #steer(to: Steer): void {
    const vad = this.#vad;
    if (to === "adaptive") {
      vad.configure({ pauseMs: PAUSE_MS, stopMs: DEFAULT_END_OF_TURN_BOUNDS.maxMs });
    } else if (to === "end_speech") vad.endSpeech();
    else if (to === "bot_speaking") vad.setStartMs(this.#bargeInMs);
    else vad.setStartMs(LISTENING_START_MS);
  }

  #onVad(e: VadEvent): void {
    if (this.#closed) return;
    this.#hooks.onActivity();
    if (e.type === "speech_start") {
      this.#record.utteranceStarted(now(), e.atMs - e.onsetMs);
      this.#log.add("worker", "speech_started", { onset_ms: e.onsetMs, at_ms: e.atMs });
      this.#hooks.onSpeechStarted();
      this.#step({ type: "speech_started", onsetMs: e.onsetMs }, e);
    } else if (e.type === "pause") {
      const prosody = this.#prosody?.cuesAt(e.silenceStartMs);
      this.#step({
        type: "speech_paused",
        silenceStartMs: e.silenceStartMs,
        atMs: e.atMs,
        prosody,
      });
    } else if (e.type === "resume") {
      this.#step({ type: "speech_resumed", pauseMs: e.pauseMs }, e);
    } else if (this.#turns.mode === "adaptive") {
      // The upper bound: the machine ends the turn (end_utterance says so to the log and page).
      this.#step({ type: "speech_stopped" });
    } else {
      // The speech ended where the VAD's silence run began, stopMs before it decided.
      this.#record.utteranceMark("speech_ended", now() - this.#vad.settings.stopMs);
      this.#record.utteranceMark("end_of_turn", now());
      this.#log.add("worker", "speech_stopped", { at_ms: e.atMs, speech_ms: e.speechMs });
      this.#hooks.onSpeechStopped();
      this.#step({ type: "speech_stopped" });
    }
  }

  #step(event: TurnEvent, vadEvent?: VadEvent): void {
    const before = this.#turns.state;
    this.#apply(this.#turns.next(event), vadEvent);
    if (this.#turns.state !== before) this.#hooks.onFloorChanged();
  }

  #apply(actions: TurnAction[], vadEvent?: VadEvent): void {
    const h = this.#hooks;
    for (const a of actions) {
      switch (a.type) {
        case "interrupt":
          h.interruptBot(a.turnId, this.#vad.settings.startMs, a.typed === true);
          break;
        case "pause_bot":
          h.pauseBot(a.turnId, this.#vad.settings.startMs);
          break;
        case "resume_bot":
          h.resumeBot(a.turnId, a.text);
          break;
        case "end_utterance":
          this.#endUtterance(a);
          break;
        case "start_recognition":
          this.#startRecognition(vadEvent);
          break;
        case "finish_recognition":
          this.#recognising = false;
          this.#finishRecognition();
          break;
        case "send_user_turn":
          if (a.speculative) this.#record.utteranceSpeculated?.(a.turnId, a.text, now());
          h.onUserTurn(a.turnId, a.text, a.typed === true, a.speculative === true);
          if (a.typed) this.#record.typedSent(a.turnId, a.text, now());
          else if (!a.speculative) this.#record.utteranceSent(a.turnId, a.text, now());
          break;
        case "confirm_turn":
          this.#record.utteranceConfirmed?.(a.turnId, now());
          h.onTurnConfirmed?.(a.turnId);
          break;
        case "cancel":
          if (!a.speculative) h.cancelTurn(a.turnId);
          else {
            this.#record.speculationDropped?.(a.turnId);
            h.onSpeculationDropped?.(a.turnId);
          }
          break;
        case "send_user_idle":
          h.onUserIdle(a.turnId);
          break;
        case "open_say":
          h.onSay?.(a.turnId, a.sayId, a.text);
          break;
        case "refuse_say":
          h.onSayRefused?.(a.sayId, a.detail);
          break;
      }
    }
  }

  #endUtterance(a: Extract<TurnAction, { type: "end_utterance" }>): void {
    if (a.vadOpen) this.#steer("end_speech");
    if (a.words) {
      // The caller's speech ended where the silence that ended the turn began.
      this.#record.utteranceMark("speech_ended", now() - a.silenceMs);
      this.#record.utteranceMark("end_of_turn", now());
    } else this.#record.utteranceDropped();
    this.#log.add("worker", "speech_stopped", {
      silence_ms: a.silenceMs,
      window_ms: a.windowMs,
      words: a.words,
    });
    this.#hooks.onSpeechStopped();
  }

  #startRecognition(e?: VadEvent): void {
    if (e?.type === "speech_start") {
      // From before the onset, start window included.
      this.#stt.push(this.#preRoll.since(Math.max(0, e.onsetMs - ONSET_PRE_ROLL_MS)));
    } else if (e?.type === "resume") {
      this.#stt.push(this.#preRoll.since(Math.max(0, e.onsetMs - RESUME_PRE_ROLL_MS)));
    }
    this.#recognising = true;
  }

  #finishRecognition(): void {
    this.#record.utteranceMark("final_requested", now());
    this.#stt.finish().then(({ text, audioMs, engine }) => {
      if (this.#closed) return;
      const clean = text.trim();
      this.#record.utteranceMark("final_text", now());
      this.#record.utteranceRecognisedBy(engine);
      this.#log.add("worker", "final_text", { text: clean, audio_ms: audioMs, engine });
      if (clean) this.#hooks.onFinalText(clean);
      // Adaptive: a pause's words may be empty and the caller go on; end_utterance drops it.
      else if (this.#turns.mode === "fixed") this.#record.utteranceDropped();
      this.#step({ type: "final_text", text: clean });
    }, (err) => {
      if (this.#closed) return;
      this.#record.utteranceDropped();
      this.#hooks.onRecognitionFailed(err as Error);
    });
  }
}
