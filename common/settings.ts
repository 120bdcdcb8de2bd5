// Operator configuration from the environment (names fixed in decisions.md).
import { TrustedProxies } from "./ipaddr.ts";
import { parsePortRange, type PortRange } from "./port_range.ts";

export interface Settings {
  databaseUrl?: string;
  dataDir: string;
  adminToken?: string;
  /** Address the API and worker HTTP servers listen on (HOST; default all interfaces). */
  host: string;
  apiPort: number;
  workerPort: number;
  nodeId?: string;
  workerPublicUrl?: string;
  iceAddresses: string[];
  /** ICE_TCP: the worker also answers with passive TCP candidates (callers that cannot use UDP). */
  iceTcp: boolean;
  tokenTtlSeconds: number;
  keyHashSecret?: string;
  tokenSigningKey?: string;
  /** Per-key token bucket for sessions.connect: refills per second; 0 turns the limit off. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /**
   * Per client address token bucket for publishable-key connects (RATE_LIMIT_PER_ADDRESS_PER_SECOND,
   * default 1; 0 turns it off) and its burst (RATE_LIMIT_PER_ADDRESS_BURST, default 5).
   */
  rateLimitPerAddressPerSecond: number;
  rateLimitPerAddressBurst: number;
  /**
   * Proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES: comma-separated IPs or CIDRs;
   * default none). The client is the right-most forwarded address that is not one of them.
   */
  trustedProxies: string[];
  /**
   * How long a connected session keeps its node slot while no offer has come (default 15 s,
   * at most the token's lifetime); then the slot goes back and the offer has to find room again.
   */
  preOfferHoldSeconds: number;
  /** Sessions one key may have holding a slot while waiting for their offer (default 20; 0 = off). */
  pendingSessionsPerKey: number;
  /**
   * Phone sessions of one SIP trunk (PENDING_SESSIONS_PER_TRUNK) and of one source address
   * (PENDING_SESSIONS_PER_SOURCE) that may hold a slot before their call starts (default 20 each;
   * 0 = off): one trunk's INVITEs that are never followed cannot take the fleet.
   */
  pendingSessionsPerTrunk: number;
  pendingSessionsPerSource: number;
  /** A node whose heartbeat is older than this is never chosen. */
  nodeStaleSeconds: number;
  /**
   * Calls the worker node takes (WORKER_CAPACITY): with one process, its capacity (default 50);
   * with several runners, the node's total, split evenly between them.
   */
  workerCapacity: number;
  /** Whether WORKER_CAPACITY was given; if not, a multi-runner node derives its capacity. */
  workerCapacitySet: boolean;
  /**
   * Call runner processes (WORKER_PROCESSES): `auto` (one per core) or a number; default 1, the
   * single worker process of old. With more than one, `deno task worker` supervises them.
   */
  workerProcesses: number | "auto";
  /**
   * Cores one whole call costs a runner, all its threads together (WORKER_CALL_COST_CORES),
   * measured by bench/media/call_density.ts; a derived capacity divides a runner's cores by it.
   */
  workerCallCostCores: number;
  /** Local folder call recordings are written to (RECORDINGS_DIR; default DATA_DIR/recordings). */
  recordingsDir: string;
  /** A draining worker lets its calls run this long before ending them (`worker_shutdown`). */
  drainTimeoutSeconds: number;
  /**
   * A provider speech engine that refused the key or could not be reached is left out of routing
   * and capabilities this long, then probed, and again after each failed probe
   * (SPEECH_ENGINE_COOL_DOWN_SECONDS, default 30; fractions allowed).
   */
  speechEngineCoolDownSeconds: number;
  /**
   * A worker gives the memory it freed back to the system this often (MEMORY_RELEASE_SECONDS,
   * default 30; 0: never): common/freed_memory.ts.
   */
  memoryReleaseSeconds: number;
  /** `text` (default: `time level [component] message key=value`) or `json` (one object a line). */
  logFormat: "text" | "json";
  /**
   * A second listener serving only `GET /metrics` without credentials (METRICS_PORT; unset: none),
   * for a scraper on a private network. On the main port `/metrics` needs the admin token.
   */
  metricsPort?: number;
  /**
   * How a caller's turn ends (END_OF_TURN): `adaptive` (default; a silence window chosen from the
   * words and the caller, backchannels over the bot resume it) or `fixed` (the VAD's fixed 600 ms
   * silence, any speech over the bot cancels it: the behaviour before, kept as a baseline).
   */
  endOfTurn: "adaptive" | "fixed";
  /**
   * A brain that sends nothing, not even a pong to the worker's pings, for this long fails its call
   * `brain_unresponsive` (BRAIN_UNRESPONSIVE_SECONDS, default 15; 0 never does).
   */
  brainUnresponsiveSeconds: number;
  /**
   * The API process also runs the SIP redirect server (UDP and TCP) on this port
   * (SIP_REDIRECT_PORT; unset: none): trunks' INVITEs get a 302 to a worker (docs/phone-numbers.md).
   */
  sipRedirectPort?: number;
  /** SIP_PORT: the worker takes phone calls over SIP on this UDP and TCP port (unset: none). */
  sipPort?: number;
  /**
   * SIP_PUBLIC_ADDRESS: the address the worker announces in Contact and SDP c= (behind NAT);
   * unset, HOST unless it is a wildcard, else the first ICE_ADDRESSES entry.
   */
  sipPublicAddress?: string;
  /**
   * RTP_PORTS: the UDP range ("40000-40999") phone calls take their RTP ports from, even ports
   * only, so a firewall can open just these; unset, any port the system gives.
   */
  rtpPorts?: PortRange;
  /**
   * RTP_SYMMETRIC=1: a phone call's RTP may come from any address (a trunk behind NAT) and is
   * latched on to after probation; unset, only from the SDP's c= address or the INVITE's source.
   */
  rtpSymmetric: boolean;
  /** RTP_TIMEOUT_SECONDS: a phone call with no RTP this long ends `media_timeout` (default 30). */
  rtpTimeoutSeconds: number;
  /**
   * RTC_PORTS: the range ("50000-50199") a worker's WebRTC media takes its ports from, UDP and the
   * ICE-TCP listeners alike (one of each per call), so a firewall can open just these; unset, any
   * port the system gives.
   */
  rtcPorts?: PortRange;
  /**
   * TRUNK_CREDENTIALS_KEY: base64 of 32 bytes; trunks' outbound digest passwords are sealed under
   * it (AES-256-GCM, common/sealed.ts). Unset: none can be stored (`deno task run` keeps one in
   * its data folder).
   */
  trunkCredentialsKey?: string;
}

/** RTC_PORTS: a range of at least two ports (werift refuses a range whose ends are equal). */
function rtcPorts(raw: string | undefined): PortRange | undefined {
  if (!raw) return undefined;
  const range = parsePortRange(raw, "RTC_PORTS");
  if (range.first === range.last) {
    throw new Error(`RTC_PORTS must span at least two ports, not "${raw}"`);
  }
  return range;
}

function endOfTurn(raw: string | undefined): "adaptive" | "fixed" {
  if (!raw || raw === "adaptive") return "adaptive";
  if (raw === "fixed") return "fixed";
  throw new Error("END_OF_TURN must be adaptive or fixed");
}

function onOff(env: Record<string, string | undefined>, name: string, fallback: boolean) {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw === "1" || raw === "true" || raw === "on") return true;
  if (raw === "0" || raw === "false" || raw === "off") return false;
  throw new Error(`${name} must be on or off`);
}

function int(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
}

function positive(env: Record<string, string | undefined>, name: string, fallback: number) {
  const n = int(env, name, fallback);
  if (n === 0) throw new Error(`${name} must be above 0`);
  return n;
}

function processes(raw: string | undefined): number | "auto" {
  if (!raw) return 1;
  if (raw === "auto") return "auto";
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    throw new Error("WORKER_PROCESSES must be auto or a whole number >= 1");
  }
  return n;
}

function logFormat(raw: string | undefined): "text" | "json" {
  if (!raw || raw === "text") return "text";
  if (raw === "json") return "json";
  throw new Error("LOG_FORMAT must be text or json");
}

function list(raw: string | undefined): string[] {
  return (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
}

export function loadSettings(env: Record<string, string | undefined> = Deno.env.toObject()) {
  const settings: Settings = {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || "data",
    adminToken: env.ADMIN_TOKEN || undefined,
    host: env.HOST || "0.0.0.0",
    apiPort: int(env, "API_PORT", 8787),
    workerPort: int(env, "WORKER_PORT", 8788),
    nodeId: env.NODE_ID || undefined,
    workerPublicUrl: env.WORKER_PUBLIC_URL || undefined,
    iceAddresses: list(env.ICE_ADDRESSES || "127.0.0.1"),
    iceTcp: onOff(env, "ICE_TCP", true),
    tokenTtlSeconds: int(env, "TOKEN_TTL_SECONDS", 300),
    keyHashSecret: env.KEY_HASH_SECRET || undefined,
    tokenSigningKey: env.TOKEN_SIGNING_KEY || undefined,
    rateLimitPerSecond: int(env, "RATE_LIMIT_PER_SECOND", 50),
    rateLimitBurst: int(env, "RATE_LIMIT_BURST", 100),
    rateLimitPerAddressPerSecond: int(env, "RATE_LIMIT_PER_ADDRESS_PER_SECOND", 1),
    rateLimitPerAddressBurst: int(env, "RATE_LIMIT_PER_ADDRESS_BURST", 5),
    trustedProxies: list(env.TRUSTED_PROXIES),
    preOfferHoldSeconds: int(env, "PRE_OFFER_HOLD_SECONDS", 15),
    pendingSessionsPerKey: int(env, "PENDING_SESSIONS_PER_KEY", 20),
    pendingSessionsPerTrunk: int(env, "PENDING_SESSIONS_PER_TRUNK", 20),
    pendingSessionsPerSource: int(env, "PENDING_SESSIONS_PER_SOURCE", 20),
    nodeStaleSeconds: int(env, "NODE_STALE_SECONDS", 10),
    workerCapacity: int(env, "WORKER_CAPACITY", 50),
    workerCapacitySet: Boolean(env.WORKER_CAPACITY),
    workerProcesses: processes(env.WORKER_PROCESSES),
    workerCallCostCores: positive(env, "WORKER_CALL_COST_CORES", 0.12),
    recordingsDir: env.RECORDINGS_DIR || `${env.DATA_DIR || "data"}/recordings`,
    drainTimeoutSeconds: int(env, "DRAIN_TIMEOUT_SECONDS", 600),
    speechEngineCoolDownSeconds: positive(env, "SPEECH_ENGINE_COOL_DOWN_SECONDS", 30),
    memoryReleaseSeconds: int(env, "MEMORY_RELEASE_SECONDS", 30),
    logFormat: logFormat(env.LOG_FORMAT),
    metricsPort: env.METRICS_PORT ? int(env, "METRICS_PORT", 0) : undefined,
    endOfTurn: endOfTurn(env.END_OF_TURN),
    brainUnresponsiveSeconds: int(env, "BRAIN_UNRESPONSIVE_SECONDS", 15),
    sipRedirectPort: env.SIP_REDIRECT_PORT ? int(env, "SIP_REDIRECT_PORT", 0) : undefined,
    sipPort: env.SIP_PORT ? int(env, "SIP_PORT", 0) : undefined,
    sipPublicAddress: env.SIP_PUBLIC_ADDRESS || undefined,
    rtpPorts: env.RTP_PORTS ? parsePortRange(env.RTP_PORTS) : undefined,
    rtpSymmetric: onOff(env, "RTP_SYMMETRIC", false),
    rtpTimeoutSeconds: positive(env, "RTP_TIMEOUT_SECONDS", 30),
    rtcPorts: rtcPorts(env.RTC_PORTS),
    trunkCredentialsKey: env.TRUNK_CREDENTIALS_KEY || undefined,
  };
  // A typo in the proxy list must stop the process, not silently trust nobody (or everybody).
  TrustedProxies.parse(settings.trustedProxies);
  return settings;
}
