// A token bucket per key, per API process: `perSecond` refill with `burst` capacity.
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private perSecond: number, private burst: number) {}

  /** 0 when allowed; otherwise the whole seconds to wait before retrying. */
  take(key: string, now = performance.now()): number {
    if (this.perSecond <= 0) return 0;
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    this.buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }
}
