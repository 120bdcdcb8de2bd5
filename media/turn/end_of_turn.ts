// How much silence ends a caller's turn: a window chosen from what was said and from this
// caller's own pauses. Shorter when the words look complete (a question, a yes/no, a number),
// longer after a filler or a trailing connective ("um", "and", Hindi "aur", "ki"); stretched for a
// caller who pauses long within turns (an exponential moving average of the pauses they resumed
// from, as LiveKit's dynamic endpointing does); always within [minMs, maxMs]. Pure: no clock.
import { endOfTurnDefaults, endsHesitant, looksComplete } from "./lexicon.ts";

export interface EndOfTurnBounds {
  /** No window is shorter (default 200 ms). */
  minMs: number;
  /** No window is longer (default 2000 ms); the VAD's own end of speech is set to it. */
  maxMs: number;
  /** Weight of the newest pause in the average (default 0.3). */
  alpha: number;
}

export const DEFAULT_END_OF_TURN_BOUNDS: Readonly<EndOfTurnBounds> = Object.freeze({
  minMs: 200,
  maxMs: 2000,
  alpha: 0.3,
});

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

  /** Silence (ms) after which a turn with these words ends. */
  windowMs(text: string): number {
    const shape = EndOfTurnPolicy.shape(text, this.language);
    const d = endOfTurnDefaults(this.language);
    const base = shape === "complete"
      ? d.complete_ms
      : shape === "hesitant"
      ? d.hesitant_ms
      : d.neutral_ms;
    const fromPauses = (this.pauseAverageMs ?? 0) * PAUSE_FACTOR[shape];
    const { minMs, maxMs } = this.bounds;
    return Math.round(Math.min(maxMs, Math.max(minMs, base, fromPauses)));
  }
}
