// Token buckets per API process: `perSecond` refill with `burst` capacity, one bucket per key
// (an API key id, or a client address for publishable-key connects). Addresses are chosen by
// whoever sends the requests, so memory is bounded: a bucket idle long enough to have refilled
// is the same as no bucket and is dropped, and beyond `maxBuckets` the least recently used go.
import type { Context } from "hono";
import { TrustedProxies } from "../../common/ipaddr.ts";
import { requestAddress } from "./client_address.ts";

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  /** In order of last use, least recent first (a Map keeps insertion order). */
  private buckets = new Map<string, Bucket>();
  private burst: number;
  private sweptAt = -Infinity;

  constructor(private perSecond: number, burst: number, private maxBuckets = 100_000) {
    this.burst = Math.max(1, burst);
  }

  /** 0 when allowed; otherwise the whole seconds to wait before retrying. */
  take(key: string, now = performance.now()): number {
    if (this.perSecond <= 0) return 0;
    this.sweep(now);
    let b = this.buckets.get(key);
    if (b) this.buckets.delete(key);
    else b = { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxBuckets) {
      this.buckets.delete(this.buckets.keys().next().value!);
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /**
   * What `take` would answer, without taking: 0 when a token is there; otherwise the whole
   * seconds until one is (a lockout that is checked before any work and charged only on failure).
   */
  waiting(key: string, now = performance.now()): number {
    if (this.perSecond <= 0) return 0;
    const b = this.buckets.get(key);
    if (!b) return 0;
    const tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.perSecond));
  }

  /** Buckets held (for tests). */
  get size(): number {
    return this.buckets.size;
  }

  /** Drops the buckets that have been idle long enough to be full again (oldest first). */
  private sweep(now: number): void {
    const refillMs = (this.burst / this.perSecond) * 1000;
    if (now - this.sweptAt < Math.min(refillMs, 1000)) return;
    this.sweptAt = now;
    for (const [key, b] of this.buckets) {
      if (now - b.at < refillMs) break;
      this.buckets.delete(key);
    }
  }
}

/** The per-address limiter of an API process, with the trusted proxies it reads addresses by. */
export class AddressLimit {
  readonly limiter: RateLimiter;
  readonly trusted: TrustedProxies;

  /** From the settings' per-address rate and TRUSTED_PROXIES (throws naming a bad entry). */
  constructor(
    settings: {
      rateLimitPerAddressPerSecond: number;
      rateLimitPerAddressBurst: number;
      trustedProxies: string[];
    },
  ) {
    this.limiter = new RateLimiter(
      settings.rateLimitPerAddressPerSecond,
      settings.rateLimitPerAddressBurst,
    );
    this.trusted = TrustedProxies.parse(settings.trustedProxies);
  }

  /** 0 when the request's client address may connect now; otherwise seconds to wait. */
  take(c: Context): number {
    return this.limiter.take(requestAddress(c, this.trusted));
  }
}
