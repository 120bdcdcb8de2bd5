// How much silence ends a caller's turn: a window chosen from what was said and from this
// caller's own pauses. Shorter when the words look complete (a question, a yes/no, a number),
// longer after a filler or a trailing connective ("um", "and", Hindi "aur", "ki"); stretched for a
// caller who pauses long within turns (an exponential moving average of the pauses they resumed
// from, as LiveKit's dynamic endpointing does); always within [minMs, maxMs]. Pure: no clock.
//
// The caller's voice at the pause (prosody.ts) moves the window on both bands. Complete words that
// end in a final fall need no more than the pause that revealed them (the VAD's 160 ms), unless
// they end on a number. Neutral words whose voice ended low in the caller's range get the
// complete window; neutral words left at or above the middle of the range (a list's "milk ...",
// a level "we could ..."), a held word, and a number group read out without ending low ("nine
// eight four ...") wait 1.3x the neutral window. Measured on the turn bench with each paused turn
// spoken as one utterance (docs/turn-taking.md, docs/decisions.md issue 36 round 2): a final
// fall alone misses most true ends, the low end tells them from mid-turn pauses on both bands.
// Questions may rise, so complete words keep their window whatever the voice. Without cues (a
// typed turn, no voiced audio) the words alone decide.
import {
  endOfTurnDefaults,
  endsHesitant,
  endsOnNumber,
  looksComplete,
  readsOutPhoneNumber,
} from "./lexicon.ts";
import type { ProsodyCues } from "./prosody.ts";

export interface EndOfTurnBounds {
  /** No window is shorter (default 200 ms). */
  minMs: number;
  /** No window is longer (default 2000 ms); the VAD's own end of speech is set to it. */
  maxMs: number;
  /** Weight of the newest pause in the average (default 0.3). */
  alpha: number;
  /** The shortest window when the voice confirms complete words (default 160 ms: the pause). */
  confirmedMinMs: number;
  /** Every window is scaled by this (the agent's turn patience; default 1). */
  scale: number;
}

export const DEFAULT_END_OF_TURN_BOUNDS: Readonly<EndOfTurnBounds> = Object.freeze({
  minMs: 200,
  maxMs: 2000,
  alpha: 0.3,
  confirmedMinMs: 160,
  scale: 1,
});

/** Neutral words whose pitch did not fall wait this much longer than the neutral window. */
const UNFINISHED_FACTOR = 1.3;

export type TextShape = "complete" | "neutral" | "hesitant";

/**
 * The window must outlast this caller's usual pause by a margin, or it cuts them off mid-turn
 * again: ×1.25 for neutral words, ×1.5 after a hesitation; complete words need only half (the
 * words say the turn ended, the pause history says how long they usually take to resume).
 */
const PAUSE_FACTOR: Record<TextShape, number> = { complete: 0.5, neutral: 1.25, hesitant: 1.5 };

export class EndOfTurnPolicy {
  private readonly bounds: EndOfTurnBounds;
  /** Average within-turn pause of this caller (ms); undefined until they resumed once. */
  pauseAverageMs?: number;

  /**
   * How the voice moves windows: `both` (the default) also moves neutral words either way;
   * `confirm` only shortens complete words the voice confirms (round 1's default).
   */
  prosody: "confirm" | "both" = "both";

  /**
   * A number group read out ("my number is nine eight four") whose voice did not end in a final
   * fall is a group, not the number's end: it waits as unfinished words do.
   */
  numberGroups = true;

  /**
   * What says the voice ended, for neutral words and number groups: a final fall (`fall`), or
   * an end low in the caller's range whatever the last movement (`low`).
   */
  endCue: "fall" | "low" = "low";

  /** How much longer than the neutral window unfinished words wait (default 1.3). */
  unfinishedFactor = UNFINISHED_FACTOR;

  /** A phone number read out short of its digits holds the turn as a trailing "and" does. */
  phoneNumbers = true;

  /** The window of words the turn cannot end on (default: the lexicon's hesitant_ms). */
  hesitantMs?: number;

  /**
   * How far into the window of words the turn cannot end on they go speculatively, as a share
   * of it (default 0.5; 0 sends them at the pause, as the first speculative turns did).
   */
  hangingSpeculation = 0.5;

  constructor(public language: string, bounds: Partial<EndOfTurnBounds> = {}) {
    this.bounds = { ...DEFAULT_END_OF_TURN_BOUNDS, ...bounds };
  }

  /**
   * The caller went on after `ms` of silence: a pause within their turn. A pause after words the
   * turn cannot end on ("um", "and", a phone number's first digits) is explained by the words and
   * says nothing of how long this caller pauses at words that could end a turn: it is not counted
   * (otherwise one long "um …" stretches the window at the turn's real end).
   */
  observePause(ms: number, text?: string): void {
    if (
      text !== undefined && EndOfTurnPolicy.shape(text, this.language, this.phoneNumbers) ===
        "hesitant"
    ) return;
    const a = this.bounds.alpha;
    this.pauseAverageMs = this.pauseAverageMs === undefined
      ? ms
      : a * ms + (1 - a) * this.pauseAverageMs;
  }

  static shape(text: string, language: string, phoneNumbers = true): TextShape {
    if (endsHesitant(text, language)) return "hesitant";
    if (phoneNumbers && readsOutPhoneNumber(text, language)) return "hesitant";
    return looksComplete(text, language) ? "complete" : "neutral";
  }

  /**
   * How far into the pause (ms of silence) these words may go to the brain as a speculative
   * turn: at once, except after words the turn cannot end on ("um", "and", a phone number half
   * read out), where the caller nearly always goes on. There they go halfway through the long
   * window (hangingSpeculation): an "um …" the caller goes on from within it costs the brain no
   * call, and a caller who did stop there still gets half the window's head start on the reply.
   */
  speculateAtMs(text: string): number {
    return EndOfTurnPolicy.shape(text, this.language, this.phoneNumbers) === "hesitant"
      ? this.windowMs(text) * this.hangingSpeculation
      : 0;
  }

  /** Silence (ms) after which a turn with these words (and this voice at the pause) ends. */
  windowMs(text: string, cues?: ProsodyCues): number {
    const shape = EndOfTurnPolicy.shape(text, this.language, this.phoneNumbers);
    const d = endOfTurnDefaults(this.language);
    let base = shape === "complete"
      ? d.complete_ms
      : shape === "hesitant"
      ? this.hesitantMs ?? d.hesitant_ms
      : d.neutral_ms;
    let { minMs } = this.bounds;
    const { maxMs, scale } = this.bounds;
    const voiced = cues !== undefined && cues.pitch !== "unknown";
    const number = voiced && shape === "complete" && endsOnNumber(text, this.language);
    const unfinished = d.neutral_ms * this.unfinishedFactor;
    const ended = voiced && (this.endCue === "low" ? cues.lowEnd : cues.finalFall);
    if (voiced && shape === "complete" && cues.finalFall && !number) {
      base = minMs = this.bounds.confirmedMinMs;
    } else if (this.numberGroups && number && !ended) {
      base = unfinished;
    } else if (this.prosody === "both" && voiced && shape === "neutral") {
      base = ended ? d.complete_ms : unfinished;
    } else if (this.prosody === "both" && voiced && cues.held && shape !== "hesitant") {
      base = unfinished;
    }
    const fromPauses = (this.pauseAverageMs ?? 0) * PAUSE_FACTOR[shape];
    return Math.round(Math.min(maxMs, Math.max(minMs, base, fromPauses) * scale));
  }
}
