// How much loss the bot's Opus encoder should expect, from what the caller's receiver reports
// (RTCP RR fraction lost, about once a second). libopus sizes its in-band FEC from it: the FEC
// copy of each frame rides in the next packet, so one lost packet is rebuilt by the browser.
// Loss rises at once and falls slowly: a burst is often followed by another, and FEC that is
// turned off just before it costs more than a few seconds of spare bits.

/** Above this, more FEC mostly takes bits from the primary frame (WebRTC caps it alike). */
export const MAX_EXPECTED_LOSS_PERCENT = 30;
/** Weight of a new, lower report: about 5 reports (seconds) to come down halfway. */
const DECAY = 0.15;

export class ExpectedLoss {
  #smoothed = 0;
  #applied: number | undefined;

  /**
   * Takes the latest reported fraction lost (0..1); returns the percentage the encoder should
   * now expect, or undefined when it has not changed by a whole point since last applied.
   */
  report(fraction: number): number | undefined {
    const f = Math.max(0, Math.min(1, fraction));
    this.#smoothed = f >= this.#smoothed ? f : this.#smoothed + DECAY * (f - this.#smoothed);
    const percent = Math.min(MAX_EXPECTED_LOSS_PERCENT, Math.round(this.#smoothed * 100));
    if (percent === this.#applied) return undefined;
    this.#applied = percent;
    return percent;
  }

  /** The percentage last returned (0 before any report). */
  get percent(): number {
    return this.#applied ?? 0;
  }
}
