// Resolves a presented API key to its grant. Grants are cached per process; a revoked key or a
// changed agent is dropped from every process's cache through LISTEN/NOTIFY. Some databases do
// not deliver notifications between connections (the embedded PGlite's socket, a pooler in
// transaction mode), so delivery is probed at start and, without it, entries live only
// briefly: either way a revocation reaches every process within one second.
import type { Pool } from "../../db/client.ts";
import { grantForHash, type KeyGrant, KEYS_CHANNEL } from "../../db/keys.ts";
import { hashKey } from "../../common/key_hash.ts";
import { logger } from "../../common/log.ts";

const log = logger("keys");

interface Entry {
  grant: KeyGrant;
  expires: number;
}

export class KeyStore {
  private cache = new Map<string, Entry>();
  private unlisten?: () => Promise<void>;

  /** How long an entry is trusted; shortened when notifications do not arrive. */
  ttlMs: number;

  constructor(
    private sql: Pool,
    private hashSecret: string,
    private options = { ttlMs: 30_000, unnotifiedTtlMs: 500 },
  ) {
    this.ttlMs = options.unnotifiedTtlMs;
  }

  /**
   * Subscribes to key changes and checks that a notification really comes back; resolves with
   * whether it did.
   */
  async listen(): Promise<boolean> {
    const probe = `probe:${crypto.randomUUID()}`;
    let heard: () => void = () => {};
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const sub = await this.sql.listen(KEYS_CHANNEL, (payload) => {
      if (payload === probe) heard();
      else this.invalidate(payload);
    }, () => {
      // (Re)connected: anything may have changed while we were away.
      this.cache.clear();
    });
    this.unlisten = () => sub.unlisten();
    await this.sql`select pg_notify(${KEYS_CHANNEL}, ${probe})`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const delivered = await Promise.race([
      arrived.then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 500))),
    ]);
    clearTimeout(timer);
    this.ttlMs = delivered ? this.options.ttlMs : this.options.unnotifiedTtlMs;
    if (!delivered) {
      log.warn("database does not deliver notifications; key cache entries live 500 ms");
    }
    return delivered;
  }

  async close(): Promise<void> {
    await this.unlisten?.().catch(() => {});
  }

  /** `payload` is a key id or `agent:<agent id>`. */
  invalidate(payload: string): void {
    const agentId = payload.startsWith("agent:") ? payload.slice(6) : undefined;
    for (const [hash, entry] of this.cache) {
      if (agentId ? entry.grant.agent_id === agentId : entry.grant.key_id === payload) {
        this.cache.delete(hash);
      }
    }
  }

  /** The grant for a raw key, or undefined for an unknown or revoked key. */
  async resolve(rawKey: string): Promise<KeyGrant | undefined> {
    const hash = hashKey(this.hashSecret, rawKey);
    const cacheKey = String.fromCharCode(...hash);
    const hit = this.cache.get(cacheKey);
    const now = Date.now();
    if (hit && hit.expires > now) return hit.grant;
    const grant = await grantForHash(this.sql, hash);
    if (grant) this.cache.set(cacheKey, { grant, expires: now + this.ttlMs });
    else if (hit) this.cache.delete(cacheKey);
    if (this.cache.size > 100_000) {
      log.warn("key cache full, clearing");
      this.cache.clear();
    }
    return grant;
  }
}
