// When the caller's speech over the bot stops it (adaptive mode). The machine (turn_taking.ts)
// holds the bot at the onset and asks these rules twice: while the caller goes on, whether the
// speech has lasted long enough to be a turn of its own; at their pause, whether the words were
// only a backchannel (the bot plays on) or a turn (the bot is cut).
import { isBackchannel } from "./lexicon.ts";

export interface BargeInOptions {
  /** Speech over the bot longer than this is not a backchannel (default 1200 ms). */
  overlapMaxMs?: number;
  /** Whether a backchannel over the bot lets it play on (default true). */
  ignoreBackchannels?: boolean;
}

export const DEFAULT_OVERLAP_MAX_MS = 1200;

export class BargeInRules {
  readonly overlapMaxMs: number;
  readonly ignoreBackchannels: boolean;

  constructor(options: BargeInOptions = {}) {
    this.overlapMaxMs = options.overlapMaxMs ?? DEFAULT_OVERLAP_MAX_MS;
    this.ignoreBackchannels = options.ignoreBackchannels ?? true;
  }

  /** Speech over the bot that has gone on `overlapMs` since its onset takes the floor. */
  takesFloor(overlapMs: number): boolean {
    return overlapMs >= this.overlapMaxMs;
  }

  /** The caller's words over the bot are in: whether the bot plays on (a backchannel, a filler). */
  playsOn(text: string, language: string): boolean {
    return this.ignoreBackchannels && isBackchannel(text, language);
  }
}
