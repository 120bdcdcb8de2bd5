// A typed line's wait on the page: from the moment the page sends it to the first bot audio it
// then hears, from the same bot-track samples as the spoken turns' figures (latency.ts). As for
// speech, a line sent while the bot is audible gets no figure: the audio that follows may be the
// tail of the reply it cut, not its answer. Nothing here reads a clock, so tests feed it times.

/** The bot must have been quiet this long when the line was sent (as the speech detector's). */
export const TYPED_BOT_QUIET_MS = 200;
/** No bot audio this long after sending: no figure. */
export const TYPED_MAX_WAIT_MS = 10_000;

export type TypedOutcome =
  | { text: string; ms: number }
  | { text: string; ms: null; why: "sent over the bot" | "no answer heard" | "superseded" };

/** Lines sent and not yet answered, each settled once by the bot samples that follow. */
export class TypedWaits {
  #botLoudAt = -Infinity;
  #waiting: { text: string; at: number; spoilt: boolean } | undefined;

  constructor(readonly onOutcome: (o: TypedOutcome) => void) {}

  /** The page sent `text` at `t`; a line still waiting is superseded (its reply was cut). */
  sent(t: number, text: string): void {
    if (this.#waiting) this.onOutcome({ text: this.#waiting.text, ms: null, why: "superseded" });
    const spoilt = t - this.#botLoudAt < TYPED_BOT_QUIET_MS;
    this.#waiting = { text, at: t, spoilt };
  }

  /** A bot-track sample at `t`: loud (above the bot threshold) or not. */
  bot(t: number, loud: boolean): void {
    const w = this.#waiting;
    if (loud) this.#botLoudAt = t;
    if (!w || t < w.at) return;
    if (w.spoilt) {
      // Over the bot: settled at once, so a later line starts afresh.
      this.#waiting = undefined;
      return this.onOutcome({ text: w.text, ms: null, why: "sent over the bot" });
    }
    if (loud) {
      this.#waiting = undefined;
      this.onOutcome({ text: w.text, ms: Math.round((t - w.at) * 10) / 10 });
    } else if (t - w.at > TYPED_MAX_WAIT_MS) {
      this.#waiting = undefined;
      this.onOutcome({ text: w.text, ms: null, why: "no answer heard" });
    }
  }
}
