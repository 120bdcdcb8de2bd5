// The API process's Prometheus metrics: one registry per process (tests run several API
// processes in one Deno process), read at `/metrics` (admin token) and on METRICS_PORT.
// sessions.connect is timed and its refusals counted by a middleware (api/app.ts); the worker
// nodes' figures are read from `worker_nodes` at scrape time.
import { registerStorageMetrics } from "./storage/metrics.ts";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Pool } from "../db/client.ts";
import { listNodes, type WorkerNode } from "../db/nodes.ts";
import { registerPoolMetrics } from "../db/pool_metrics.ts";
import { registerProcessMetrics } from "../common/metrics/process.ts";
import { logger } from "../common/log.ts";

const log = logger("metrics");

export const CONNECT_PATH = "/api/v1/sessions.connect";
/** Upper bounds of the connect latency buckets, in seconds. */
export const CONNECT_LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** How long one read of `worker_nodes` serves scrapes (the four node gauges share it). */
const NODES_TTL_MS = 1000;

export interface ApiMetricsOptions {
  sql: Pool;
  /** The reservation pool, when it is another pool than `sql`. */
  reservations?: Pool;
  /** A node whose heartbeat is older than this is not live (NODE_STALE_SECONDS). */
  nodeStaleSeconds: number;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

export class ApiMetrics {
  readonly registry = new Registry();
  readonly connectDuration = new Histogram({
    name: "voice_connect_duration_seconds",
    help: "sessions.connect from request to response, by outcome: ok (2xx), refused (4xx), " +
      "error (5xx).",
    labelNames: ["outcome"],
    buckets: CONNECT_LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly connectRefusals = new Counter({
    name: "voice_connect_refusals_total",
    help: "sessions.connect answered with an error, by the error code the caller got.",
    labelNames: ["code"],
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: "voice_http_requests_total",
    help: "HTTP requests answered by this API process, by method, route pattern (unmatched " +
      "for no route) and status.",
    labelNames: ["method", "route", "status"],
    registers: [this.registry],
  });

  #nodes?: { at: number; rows: Promise<WorkerNode[]> };

  constructor(private options: ApiMetricsOptions) {
    const nodes = () => this.#readNodes();
    const nodeGauge = (name: string, help: string, value: (n: WorkerNode) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["node_id"],
        registers: [this.registry],
        async collect() {
          const rows = await nodes();
          this.reset();
          for (const n of rows) this.set({ node_id: n.node_id }, value(n));
        },
      });
    nodeGauge(
      "voice_node_active_calls",
      "Calls reserved on a worker node (worker_nodes.active_calls: connects not yet ended, " +
        "including sessions whose offer has not arrived yet).",
      (n) => n.active_calls,
    );
    nodeGauge(
      "voice_node_capacity",
      "Calls a worker node registered it can run at once (worker_nodes.capacity).",
      (n) => n.capacity,
    );
    nodeGauge(
      "voice_node_draining",
      "1 while a worker node drains (takes no new calls), else 0.",
      (n) => n.draining ? 1 : 0,
    );
    nodeGauge(
      "voice_node_live",
      "1 when a worker node's heartbeat is fresher than NODE_STALE_SECONDS, else 0 (by this " +
        "API process's clock).",
      (n) => Date.now() - n.heartbeat_at.getTime() < options.nodeStaleSeconds * 1000 ? 1 : 0,
    );
    registerPoolMetrics(this.registry, {
      main: options.sql,
      ...(options.reservations ? { reservations: options.reservations } : {}),
    });
    registerProcessMetrics(this.registry);
    registerStorageMetrics(this.registry, options.sql);
  }

  /** One read of worker_nodes for the gauges of a scrape; on failure no node series, logged. */
  #readNodes(): Promise<WorkerNode[]> {
    const now = performance.now();
    if (!this.#nodes || now - this.#nodes.at > NODES_TTL_MS) {
      const rows = listNodes(this.options.sql).catch((err) => {
        log.warn("could not read worker_nodes for the metrics", { cause: (err as Error).message });
        return [] as WorkerNode[];
      });
      this.#nodes = { at: now, rows };
    }
    return this.#nodes.rows;
  }

  /** Counts every request; times sessions.connect and counts its refusals by code. */
  readonly middleware: MiddlewareHandler = async (c, next) => {
    const started = performance.now();
    await next();
    const status = c.res.status;
    // The method is the client's to choose: unknown ones share one series (bounded cardinality).
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : "other";
    this.requests.inc({ method, route: answeredBy(c), status });
    if (c.req.method !== "POST" || c.req.path !== CONNECT_PATH) return;
    const outcome = status < 400 ? "ok" : status < 500 ? "refused" : "error";
    this.connectDuration.observe({ outcome }, (performance.now() - started) / 1000);
    if (status >= 400) this.connectRefusals.inc({ code: await errorCode(c.res) });
  };
}

/**
 * The pattern of the route that answered (bounded, unlike paths), or `unmatched` when no route
 * did: the last handler to run was a middleware (it takes `next`) and the answer is a 404 that no
 * handler threw.
 */
function answeredBy(c: Context): string {
  const r = matchedRoutes(c)[c.req.routeIndex];
  if (!r || (c.res.status === 404 && !c.error && r.handler.length >= 2)) return "unmatched";
  return r.path;
}

/** The `error.code` of an error envelope (from a copy: the response goes out untouched). */
async function errorCode(res: Response): Promise<string> {
  try {
    const code = (await res.clone().json())?.error?.code;
    return typeof code === "string" ? code : "unknown";
  } catch {
    return "unknown";
  }
}
