// Builds an API process's dependencies: database, secrets, key cache, and the sweeper (unused
// sessions expire; sessions with no offer within their pre-offer hold give their slot back;
// sessions of a worker that stopped heartbeating fail with `worker_lost`), and the campaign
// scheduler (api/campaigns/scheduler.ts) when a dialer is given.
import { loadTelephonySettings, type TelephonySettings } from "../common/telephony_settings.ts";
import type { Database } from "../db/client.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { expireUnused, forgetExpiredAdmissionKeys, releaseLapsedHolds } from "../db/sessions.ts";
import { failLostSessions } from "../db/nodes.ts";
import { anySealedTrunk } from "../db/trunks.ts";
import { importSealingKey, open, TRUNK_CREDENTIALS_KEY } from "../common/sealed.ts";
import type { Settings } from "../common/settings.ts";
import { TokenSigner } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";
import { randomBase62 } from "../common/ids.ts";
import { logger } from "../common/log.ts";
import { KeyStore } from "./auth/key_store.ts";
import { AddressLimit, RateLimiter } from "./auth/rate_limit.ts";
import { LiveCapabilities } from "./live_capabilities.ts";
import { ApiMetrics } from "./metrics.ts";
import type { ApiDeps } from "./context.ts";
import { campaignDialer } from "./campaigns/dial.ts";
import { CampaignScheduler, type Dial } from "./campaigns/scheduler.ts";
import { type DispatcherOptions, WebhookDispatcher } from "./webhooks/dispatcher.ts";
import { checkWebhookKey } from "./webhooks/key_check.ts";
import { StorageLoop } from "./storage/storage_loop.ts";
import { checkStorageKey } from "./storage/bucket.ts";

const log = logger("api");

export async function keyHashSecret(db: Database, settings: Settings): Promise<string> {
  if (settings.keyHashSecret) return settings.keyHashSecret;
  return await settingOrCreate(db.sql, "key_hash_secret", () => randomBase62(48));
}

/**
 * TRUNK_CREDENTIALS_KEY, checked against what the database keeps: with sealed outbound passwords
 * kept, the API does not start without the key (its calls over those trunks could only fail),
 * nor with a key that does not open them (the wrong key, or the right one mistyped).
 */
export async function trunkCredentialsKey(
  db: Database,
  settings: Settings,
): Promise<CryptoKey | undefined> {
  const key = settings.trunkCredentialsKey === undefined
    ? undefined
    : await importSealingKey(settings.trunkCredentialsKey);
  const sealed = await anySealedTrunk(db.sql);
  if (!sealed) return await checkStorageKey(db.sql, key);
  if (!key) {
    throw new Error(
      `${TRUNK_CREDENTIALS_KEY} is not set, but trunks keep outbound credentials sealed under ` +
        `it (${sealed.trunk_id} for one): set it to the key they were sealed with`,
    );
  }
  try {
    await open(key, sealed.outbound_password_sealed!, sealed.trunk_id);
  } catch (err) {
    throw new Error(`${TRUNK_CREDENTIALS_KEY} is wrong: ${(err as Error).message}`);
  }
  return await checkStorageKey(db.sql, key);
}

export interface ApiService {
  deps: ApiDeps;
  close(): Promise<void>;
}

export async function startApiService(
  db: Database,
  settings: Settings,
  options: {
    sweepMs?: number;
    telephony?: TelephonySettings;
    /** Places a campaign's calls; api/campaigns/dial.ts's dialNumber unless a test gives one. */
    campaignDial?: Dial;
    campaignTickMs?: number;
    /** The webhook dispatcher's (api/webhooks/dispatcher.ts); tests pass a manual clock. */
    webhooks?: DispatcherOptions & { tickMs?: number };
    storageTickMs?: number;
    retentionEveryMs?: number;
  } = {},
): Promise<ApiService> {
  const hashSecret = await keyHashSecret(db, settings);
  const trunkKey = await trunkCredentialsKey(db, settings);
  await checkWebhookKey(db.sql, trunkKey);
  const signer = await TokenSigner.fromJwk(await signingJwk(db, settings));
  const keys = new KeyStore(db.sql, hashSecret);
  await keys.listen();
  const adminToken = settings.adminToken ?? `adm_${randomBase62(32)}`;
  const deps: ApiDeps = {
    sql: db.sql,
    reservations: db.reservations,
    settings,
    adminToken,
    hashSecret,
    signer,
    keys,
    limiter: new RateLimiter(settings.rateLimitPerSecond, settings.rateLimitBurst),
    addressLimit: new AddressLimit(settings),
    capabilities: new LiveCapabilities(db.sql, settings.nodeStaleSeconds),
    telephony: options.telephony ?? loadTelephonySettings(),
    trunkKey,
    metrics: new ApiMetrics({
      sql: db.sql,
      reservations: db.reservations,
      nodeStaleSeconds: settings.nodeStaleSeconds,
    }),
  };
  let sweeping = false;
  const sweeper = setInterval(async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const n = await expireUnused(db.sql);
      if (n) log.info("expired unused sessions", { count: n });
      const lapsed = await releaseLapsedHolds(db.sql);
      if (lapsed) log.info("released the slots of sessions with no offer yet", { count: lapsed });
      await forgetExpiredAdmissionKeys(db.sql);
      for (const id of await failLostSessions(db.sql, settings.nodeStaleSeconds)) {
        log.warn("session failed: its worker was lost", { session_id: id });
      }
    } catch (err) {
      log.warn("expiry sweep failed", { cause: (err as Error).message });
    } finally {
      sweeping = false;
    }
  }, options.sweepMs ?? 2000);
  const campaigns = new CampaignScheduler(db.sql, options.campaignDial ?? campaignDialer(deps));
  campaigns.start(options.campaignTickMs ?? 1000);
  // Without the key no endpoint can exist (webhooks.create refuses), so there is nothing to send.
  const webhooks = trunkKey && new WebhookDispatcher(db.sql, trunkKey, options.webhooks);
  webhooks?.start(options.webhooks?.tickMs ?? 500);
  // Issue 37: signs recordings' uploads and sweeps retention (api/storage/storage_loop.ts).
  const storage = new StorageLoop(db.sql, trunkKey, options.retentionEveryMs);
  storage.start(options.storageTickMs ?? 1000);
  return {
    deps,
    close: async () => {
      clearInterval(sweeper);
      await campaigns.stop();
      await webhooks?.stop();
      await storage.stop();
      await keys.close();
    },
  };
}
