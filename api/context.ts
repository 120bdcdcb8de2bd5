// What the API's routes need, built once per process (api/service.ts) and passed in.
import type { Pool } from "../db/client.ts";
import type { Settings } from "../common/settings.ts";
import type { TokenSigner } from "../common/token.ts";
import type { CapabilitySource } from "./live_capabilities.ts";
import type { KeyStore } from "./auth/key_store.ts";
import type { AddressLimit, RateLimiter } from "./auth/rate_limit.ts";
import type { ApiMetrics } from "./metrics.ts";
import type { TelephonySettings } from "../common/telephony_settings.ts";

export interface ApiDeps {
  sql: Pool;
  /** For the connect-time reservation only (see Database.reservations). */
  reservations: Pool;
  settings: Settings;
  adminToken: string;
  hashSecret: string;
  signer: TokenSigner;
  keys: KeyStore;
  /** Per key: sessions.connect's token bucket. */
  limiter: RateLimiter;
  /** Per client address, for publishable-key connects. */
  addressLimit: AddressLimit;
  /** What the live worker nodes serve (cached briefly). */
  capabilities: CapabilitySource;
  /** This process's Prometheus registry and the middleware that feeds it. */
  metrics: ApiMetrics;
  /** Telephony providers' webhook credentials (api/telephony/); absent, their webhooks are refused. */
  telephony?: TelephonySettings;
  /**
   * TRUNK_CREDENTIALS_KEY: seals and opens trunks' outbound passwords (common/sealed.ts); absent,
   * none can be stored, and the API does not start while any is kept (api/service.ts).
   */
  trunkKey?: CryptoKey;
  /** How long calls.dial waits for the worker to take the call (api/dial/dial.ts). */
  dialTimeoutMs?: number;
}
