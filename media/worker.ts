// The worker's HTTP side: the offer endpoint (with CORS, for pages on any origin) and health.
// Audio never touches this: it flows over the peer connections the offers set up.
import { Hono } from "hono";
import type { Context } from "hono";
import { cors } from "hono/cors";
import type { Pool } from "../db/client.ts";
import { handleErrors } from "../common/http/errors.ts";
import { correlation } from "../common/http/correlation.ts";
import type { TokenVerifier } from "../common/token.ts";
import { logger } from "../common/log.ts";
import type { CallEngines } from "./engines/call_engines.ts";
import type { Call } from "./call/call.ts";
import type { EndOfTurnMode } from "./turn/turn_taking.ts";
import { LatenessHistogram } from "./audio/pacer.ts";
import { patchCandidates, postOffer } from "./signaling/offer.ts";
import { postDial } from "./signaling/dial.ts";
import type { Dialler } from "./sip/dial_call.ts";
import { type AdmittedPhoneCall, telephonyStream } from "./signaling/telephony_stream.ts";
import type { TelephonySettings } from "../common/telephony_settings.ts";
import { streamPhoneCalls } from "./signaling/stream_phone_calls.ts";
import { WorkerMetrics } from "./node/metrics.ts";
import { metricsResponse, requireMetricsToken } from "../common/metrics/http.ts";

const log = logger("worker");

export interface WorkerContext {
  sql: Pool;
  nodeId: string;
  verifier: TokenVerifier;
  iceAddresses: string[];
  /** Passive TCP candidates in answers (ICE_TCP, default on). */
  iceTcp?: boolean;
  /** RTC_PORTS: the [first, last] ports calls' ICE sockets bind (unset: any). */
  icePortRange?: [number, number];
  /** Calls on this node by session id, whatever their line (web, SIP, a carrier's stream). */
  calls: Map<string, Call>;
  /** The speech engines calls use; absent, only the echo diagnostic can be served. */
  engines?: CallEngines;
  recordingsDir?: string;
  /** How callers' turns end on this node (END_OF_TURN); absent, adaptive. */
  endOfTurn?: EndOfTurnMode;
  /** Set when the node drains: it takes no new calls and says so at `/readyz`. */
  draining?: boolean;
  /** The node's metrics; absent, createWorkerApp makes them (and sets this field). */
  metrics?: WorkerMetrics;
  /** Needed as a bearer token for `/metrics` on this port; absent, `/metrics` here is refused. */
  adminToken?: string;
  /** The capacity the node registered (reported in the metrics). */
  capacity?: number;
  /** Telephony providers' credentials (hang-up and transfer through their REST APIs). */
  telephony?: TelephonySettings;
  /**
   * Runs a phone call admitted on a provider's media stream; absent, it joins the node's calls as
   * every call does (media/call/node_calls.ts).
   */
  startPhoneCall?: (call: AdmittedPhoneCall) => void;
  /** Outbound calls over a SIP trunk (media/sip/dial_call.ts); absent without SIP_PORT. */
  dialler?: Dialler;
}

export function createWorkerApp(w: WorkerContext): Hono {
  const app = new Hono();
  app.use("*", correlation);
  app.use(
    "/sessions/:session_id/offer",
    cors({
      origin: (origin) => origin,
      allowMethods: ["POST", "PATCH", "OPTIONS"],
      allowHeaders: ["Authorization", "Content-Type"],
      exposeHeaders: ["X-Correlation-Id"],
      maxAge: 600,
    }),
  );
  const metrics = w.metrics ??= new WorkerMetrics();
  w.startPhoneCall ??= streamPhoneCalls(w);
  metrics.watch(w);
  const route = (h: (c: Context, w: WorkerContext) => Promise<Response>) => (c: Context) => h(c, w);
  app.post("/sessions/:session_id/offer", async (c) => {
    const answer = await postOffer(c, w);
    // A new call (not a renegotiation of a running one) is counted, and followed to its end.
    const call = w.calls.get(c.req.param("session_id")!);
    if (call) metrics.track(call);
    return answer;
  });
  app.patch("/sessions/:session_id/offer", route(patchCandidates));
  // Outbound calls (issue 34): the control plane posts a WorkerDial with the session's token.
  app.post("/sessions/:session_id/dial", route(postDial));
  // Telephony providers' media streams (Twilio, Plivo, Exotel): docs/telephony-websocket.md.
  app.get("/telephony/:carrier/:session_id", route(telephonyStream));
  // Alive (liveness) even while draining; ready (readiness) only while it takes new calls.
  app.get(
    "/healthz",
    (c) => c.json({ ok: true, node_id: w.nodeId, calls: w.calls.size, draining: !!w.draining }),
  );
  app.get(
    "/readyz",
    (c) => c.json({ ready: !w.draining, node_id: w.nodeId }, w.draining ? 503 : 200),
  );
  app.get("/stats", (c) => c.json(nodeStats(w)));
  app.get("/metrics", (c) => {
    requireMetricsToken(c, w.adminToken);
    return metricsResponse(metrics.registry);
  });
  // A 5xx makes the client retry with a new peer connection: right for transient failures.
  handleErrors(app, log);
  return app;
}

/**
 * Per-node figures for operators and benchmarks: aggregates over the calls on the node now, never
 * per-session data. Lateness is merged from every call's pacer histogram (percentiles cannot be
 * averaged); its non-empty buckets are included so a reader can diff two snapshots for a window.
 */
export function nodeStats(w: WorkerContext) {
  const merged = new LatenessHistogram();
  let ticks = 0, skipped = 0, voiced = 0;
  for (const call of w.calls.values()) {
    // Every call's audio is paced by its line; a phone line does not count its voiced frames.
    const p = call.line.pacing;
    skipped += p.skipped;
    voiced += p.voiced ?? 0;
    if (p.histogram) {
      ticks += p.histogram.count;
      merged.merge(p.histogram);
    }
  }
  const buckets: Record<string, number> = {};
  merged.counts.forEach((n, i) => {
    if (n) buckets[i] = n;
  });
  return {
    node_id: w.nodeId,
    calls: w.calls.size,
    pacing: {
      ticks,
      skipped_frames: skipped,
      voiced_frames: voiced,
      late_ms: {
        mean: merged.count ? merged.sumMs / merged.count : 0,
        p50: merged.quantile(0.5),
        p99: merged.quantile(0.99),
        max: merged.maxLateMs,
      },
      histogram: { bucket_ms: merged.bucketMs, max_ms: merged.maxMs, buckets },
    },
    memory: { rss_bytes: Deno.memoryUsage().rss },
  };
}
