// The bot's side of the call, the counterpart of the caller's audio (media/caller_audio/): the
// units the turn machine let through go to the speaker; what the speaker reports goes to the page
// (RTVI), the turn record and the session log here, and to the call through hooks (the floor,
// the bot's voice starting and stopping, each unit's heard text for the brain).
import { logger } from "../../common/log.ts";
import type { FloorEvent } from "../caller_audio/caller_audio.ts";
import type { RtviObserver } from "../rtvi/observer.ts";
import { Speaker, type SpeakerLimits, type Synthesize, type UnitHeard } from "../speech/speaker.ts";
import type { SessionLog } from "./session_log.ts";
import type { TurnLog } from "./turn_record.ts";

export interface BotVoiceHooks {
  /** A reply's first audio went out, or a reply played out: the floor follows. */
  onFloor(event: FloorEvent): void;
  /** The bot's voice started or stopped (told once per change). */
  onSpeaking(on: boolean): void;
  /** A unit is done, played out or cut: what the caller heard of it. */
  onHeard(unit: UnitHeard): void;
  /** Nothing is left to play. */
  onIdle(): void;
  /** A unit's synthesis failed on every engine before any audio: the call has no voice. */
  onVoiceless(err: Error): void;
}

export interface BotVoiceOptions {
  sessionId: string;
  synthesize: Synthesize;
  limits: Partial<SpeakerLimits>;
  page: RtviObserver;
  record: TurnLog;
  log: SessionLog;
  hooks: BotVoiceHooks;
}

/** Queued speech plays out at most this long once the brain ends the session. */
export const PLAY_OUT_MS = 15_000;

const now = () => performance.now();
const log = logger("bot_voice");

export class BotVoice {
  readonly speaker: Speaker;
  /** Every unit done so far (the brain's Finalize). */
  readonly heard: UnitHeard[] = [];
  #speaking = false;
  /** Speculative turns whose reply is held, and how many of their units came. */
  #held = new Map<string, number>();

  constructor(private opts: BotVoiceOptions) {
    const { page, record, hooks } = opts;
    this.speaker = new Speaker(opts.synthesize, {
      onTurnAudioStarted: (turnId) => {
        record.mark(turnId, "first_audio", now());
        hooks.onFloor({ type: "playback_started", turnId });
      },
      onUnitStarted: (u) => {
        this.#setSpeaking(true);
        page.botOutput(u.text, "", "new");
      },
      onProgress: (u, heard) => page.botOutput(u.text, heard, "in-progress"),
      onUnitDone: (u) => this.#unitDone(u),
      onTurnAudioReady: (turnId) => record.mark(turnId, "audio_ready", now()),
      onTurnFinished: (turnId) => {
        record.mark(turnId, "done", now());
        hooks.onFloor({ type: "reply_finished", turnId });
      },
      onIdle: () => {
        this.#setSpeaking(false);
        hooks.onIdle();
      },
      onSynthesisError: (u, err, gotAudio) => {
        log.error("synthesis failed", {
          session_id: opts.sessionId,
          unit: u.unitId,
          cause: err.message,
        });
        opts.log.add("worker", "synthesis_error", { unit_id: u.unitId, error: err.message });
        // Every engine of the route (the last one twice) made nothing: the call has no voice.
        if (!gotAudio) hooks.onVoiceless(err);
      },
    }, opts.limits);
  }

  /** Whether anything is playing or waiting to play. */
  get busy(): boolean {
    return this.speaker.busy;
  }

  /** A unit the turn machine accepted: queued, unless the queue is full. */
  play(turnId: string, unitId: string, text: string, last: boolean): void {
    this.opts.record.mark(turnId, "first_unit", now());
    const held = this.#held.get(turnId);
    if (held !== undefined) this.#held.set(turnId, held + 1);
    if (this.speaker.enqueue({ turnId, unitId, text }, last)) return;
    const { units, chars } = this.speaker.queued;
    this.opts.log.add("worker", "unit_refused", {
      turn_id: turnId,
      unit_id: unitId,
      reason: "queue_full",
      queued_units: units,
      queued_chars: chars,
    });
  }

  /**
   * A speculative turn was sent: its units, as they come, are synthesized (within the queue's
   * bounds) but held until release() or discard().
   */
  hold(turnId: string): void {
    this.#held.set(turnId, 0);
    this.speaker.hold(turnId);
  }

  /** The speculative turn is the caller's: what is held plays at once. Returns its units so far. */
  release(turnId: string): number {
    const units = this.#held.get(turnId) ?? 0;
    this.#held.delete(turnId);
    this.speaker.release(turnId);
    return units;
  }

  /** The caller went on: the held reply is dropped unheard. Returns its units so far. */
  discard(turnId: string): number {
    const units = this.#held.get(turnId) ?? 0;
    this.#held.delete(turnId);
    this.speaker.discard(turnId);
    return units;
  }

  /** A unit that is not spoken, and why. */
  drop(turnId: string, unitId: string, reason: string): void {
    this.opts.log.add("worker", "unit_dropped", { turn_id: turnId, unit_id: unitId, reason });
  }

  /**
   * Speech over the bot: its audio is held where it is, at the frame, and so are the turn's units
   * still to come (the speaker may have played out all it had: the pause must not wait for one).
   */
  pause(turnId: string, windowMs: number): void {
    this.speaker.pause(performance.now(), turnId);
    this.opts.log.add("worker", "bot_paused", { turn_id: turnId, window_ms: windowMs });
  }

  resume(turnId: string, text: string): void {
    this.speaker.resume();
    this.opts.log.add("worker", "bot_resumed", { turn_id: turnId, text });
  }

  /** Barge-in: the turn stops at the next frame and its later units are dropped. */
  cut(turnId: string): void {
    this.speaker.cutOff(turnId);
    // A pause held for the overlap ends with the cut (other turns' speech may still be queued).
    this.speaker.resume();
    this.opts.record.interrupted(turnId);
  }

  /** The call ends: everything is cut. */
  stop(): void {
    this.speaker.cutOff();
  }

  #setSpeaking(on: boolean): void {
    if (on === this.#speaking) return;
    this.#speaking = on;
    if (on) this.opts.page.botStartedSpeaking();
    else this.opts.page.botStoppedSpeaking();
    this.opts.hooks.onSpeaking(on);
  }

  #unitDone(u: UnitHeard): void {
    this.heard.push(u);
    this.opts.record.unitDone(u.turnId, {
      unit_id: u.unitId,
      text: u.text,
      heard: u.heard,
      cut_off: u.cutOff,
      ...(u.engine ? { engine: u.engine } : {}),
      ...(u.estimated ? { heard_estimated: true } : {}),
    });
    this.opts.hooks.onHeard(u);
    this.opts.page.botOutput(u.text, u.heard, "completed");
  }
}
