// The turn machine's vocabulary: the events it is fed, the actions it answers with, its options.
// Kept apart from the machine (turn_taking.ts) so the call, the tests and the benchmark share them.
import type { EndOfTurnPolicy } from "./end_of_turn.ts";
import type { ProsodyCues } from "./prosody.ts";

export type TurnState =
  | "listening"
  | "caller_speaking"
  /** Adaptive: the caller paused; the turn ends if the silence reaches the window. */
  | "caller_paused"
  | "end_of_turn"
  | "waiting_for_brain"
  | "bot_speaking";

export type TurnEvent =
  /** The greeting is expected from the brain; it holds the floor like any reply. */
  | { type: "greeting_expected" }
  /** onsetMs: audio time of the speech's onset (adaptive: bounds speech over the bot). */
  | { type: "speech_started"; onsetMs?: number }
  | { type: "speech_stopped" }
  /**
   * Adaptive: the VAD saw a short silence, which began at audio time silenceStartMs; prosody:
   * the caller's voice before it (prosody.ts), which moves the end-of-turn window.
   */
  | { type: "speech_paused"; silenceStartMs: number; atMs: number; prosody?: ProsodyCues }
  /** Adaptive: speech came back after pauseMs of silence. */
  | { type: "speech_resumed"; pauseMs: number }
  /** Adaptive: the audio has been decided up to atMs (the machine's only clock). */
  | { type: "audio_time"; atMs: number }
  /** The recogniser's final text for the utterance that just ended. */
  | { type: "final_text"; text: string }
  /** The brain has the floor after silence (idle). */
  | { type: "idle_elapsed" }
  /** The caller typed a turn on the page (RTVI send-text). */
  | { type: "typed_text"; text: string }
  /** The brain asks to speak outside a turn (Say): only on a free floor, as idle does. */
  | { type: "say_requested"; sayId: string; text: string }
  /** A reply's first audio frame went out. */
  | { type: "playback_started"; turnId: string }
  /** A reply played out: its last unit arrived and every frame was sent. */
  | { type: "reply_finished"; turnId: string }
  /** No unit of the awaited reply came in time: the caller gets the floor back. */
  | { type: "reply_timeout"; turnId: string };

export type TurnAction =
  | { type: "start_recognition" }
  | { type: "finish_recognition" }
  /**
   * typed: the caller typed the text (send-text) rather than spoke it. speculative: the caller
   * only paused (speculative.ts): the reply is held until confirm_turn, or dropped by cancel.
   */
  | { type: "send_user_turn"; turnId: string; text: string; typed?: boolean; speculative?: boolean }
  /** The speculative turn's window closed on its words: it is the caller's turn; play its reply. */
  | { type: "confirm_turn"; turnId: string }
  | { type: "send_user_idle"; turnId: string }
  /** The brain's Say has the floor as turn `turnId`; refuse_say: it does not, and why. */
  | { type: "open_say"; turnId: string; sayId: string; text: string }
  | { type: "refuse_say"; sayId: string; detail: string }
  /** Barge-in: stop the bot now, tell the brain, drop the turn's later units (typed: by text). */
  | { type: "interrupt"; turnId: string; typed?: boolean }
  /**
   * A timed-out turn was superseded before its reply came: tell the brain, drop its units.
   * speculative: the caller went on (or the words changed) before the window closed: the held
   * reply is dropped unheard.
   */
  | { type: "cancel"; turnId: string; speculative?: boolean }
  /** Adaptive: the caller speaks over the bot: hold its audio where it is. */
  | { type: "pause_bot"; turnId: string }
  /** Adaptive: that was a backchannel or noise: play on from where it stopped. */
  | { type: "resume_bot"; turnId: string; text: string }
  /**
   * Adaptive: the caller's utterance is over before the VAD's own end (`vadOpen`: tell the VAD).
   * `words`: whether it made a turn; silenceMs/windowMs: the silence it ended after, and why.
   */
  | {
    type: "end_utterance";
    vadOpen: boolean;
    words: boolean;
    silenceMs: number;
    windowMs: number;
  };

export type EndOfTurnMode = "adaptive" | "fixed";

export interface TurnTakingOptions {
  /** Default `fixed` (the machine as it always was); calls use `adaptive` unless told. */
  mode?: EndOfTurnMode;
  /** The caller's language (roster name or code), for the lexicon. Default English. */
  language?: string;
  /** The window policy (default: one for `language`). */
  policy?: EndOfTurnPolicy;
  /** Speech over the bot longer than this is not a backchannel (default 1200 ms). */
  overlapMaxMs?: number;
  /** Whether a backchannel over the bot lets it play on (default true). */
  ignoreBackchannels?: boolean;
  /** Adaptive only: a pause's words go to the brain before the window closes (default off). */
  speculative?: boolean;
}

/**
 * Whether a unit of a turn is spoken, or why not. held: a speculative turn's unit, synthesized
 * but not played until the turn is confirmed.
 */
export type UnitVerdict = "accepted" | "held" | "cancelled" | "superseded";
