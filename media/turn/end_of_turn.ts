// How much silence ends a caller's turn: a window chosen from what was said and from this
// caller's own pauses. Shorter when the words look complete (a question, a yes/no, a number),
// longer after a filler or a trailing connective ("um", "and", Hindi "aur", "ki"); stretched for a
// caller who pauses long within turns (an exponential moving average of the pauses they resumed
// from, as LiveKit's dynamic endpointing does); always within [minMs, maxMs]. Pure: no clock.
//
// The caller's voice at the pause (prosody.ts) moves the window on both bands. By default
// (prosody "confirm") only one way: complete words that end in a final fall need no more than the
// pause that revealed them (the VAD's 160 ms), unless they end on a number (numbers are read out
// a group at a time, each group falling). With prosody "both", neutral words with a final fall
// get the complete window, and neutral words whose pitch did not fall (a list's rise, a level
// "for ..."), or a held word, wait 1.3x the neutral one: not the default, as the turn bench's
// phrases are each spoken as a sentence of their own and cannot measure it yet (docs/decisions.md,
// issue 36). Questions may rise, so complete words without a fall keep their window. Without
// cues (a typed turn, no voiced audio) the words alone decide, as before.
import { endOfTurnDefaults, endsHesitant, endsOnNumber, looksComplete } from "./lexicon.ts";
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
   * How the voice moves windows: `confirm` (the default) only shortens complete words the voice
   * confirms; `both` also moves neutral words either way (see the header and docs/decisions.md:
   * the turn bench's phrases, each spoken as its own sentence, cannot measure it yet).
   */
  prosody: "confirm" | "both" = "confirm";

  constructor(public language: string, bounds: Partial<EndOfTurnBounds> = {}) {
    this.bounds = { ...DEFAULT_END_OF_TURN_BOUNDS, ...bounds };
  }

  /** The caller went on after `ms` of silence: a pause within their turn. */
  observePause(ms: number): void {
    const a = this.bounds.alpha;
    this.pauseAverageMs = this.pauseAverageMs === undefined
      ? ms
      : a * ms + (1 - a) * this.pauseAverageMs;
  }

  static shape(text: string, language: string): TextShape {
    if (endsHesitant(text, language)) return "hesitant";
    return looksComplete(text, language) ? "complete" : "neutral";
  }

  /** Silence (ms) after which a turn with these words (and this voice at the pause) ends. */
  windowMs(text: string, cues?: ProsodyCues): number {
    const shape = EndOfTurnPolicy.shape(text, this.language);
    const d = endOfTurnDefaults(this.language);
    let base = shape === "complete"
      ? d.complete_ms
      : shape === "hesitant"
      ? d.hesitant_ms
      : d.neutral_ms;
    let { minMs } = this.bounds;
    const { maxMs, scale } = this.bounds;
    const voiced = cues !== undefined && cues.pitch !== "unknown";
    if (voiced && shape === "complete" && cues.finalFall && !endsOnNumber(text, this.language)) {
      base = minMs = this.bounds.confirmedMinMs;
    } else if (this.prosody === "both" && voiced && shape === "neutral") {
      base = cues.finalFall ? d.complete_ms : d.neutral_ms * UNFINISHED_FACTOR;
    } else if (this.prosody === "both" && voiced && cues.held && shape !== "hesitant") {
      base = d.neutral_ms * UNFINISHED_FACTOR;
    }
    const fromPauses = (this.pauseAverageMs ?? 0) * PAUSE_FACTOR[shape];
    return Math.round(Math.min(maxMs, Math.max(minMs, base, fromPauses) * scale));
  }
}
