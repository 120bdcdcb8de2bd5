// One token bucket: `perSecond` refill up to `burst`. For one stream's own rate (a call's page
// messages, a call's key presses); api/auth/rate_limit.ts keeps a bucket per key for the API.
export class TokenBucket {
  #tokens: number;
  #refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = burst;
    this.#refilledAt = now();
  }

  /** One token if there is one; false when over the rate. A rate of 0 or less takes no limit. */
  take(): boolean {
    if (this.perSecond <= 0) return true;
    const now = this.now();
    this.#tokens = Math.min(
      this.burst,
      this.#tokens + ((now - this.#refilledAt) / 1000) * this.perSecond,
    );
    this.#refilledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
