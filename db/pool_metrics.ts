// Database pool use on a Prometheus registry, from what client.ts measures of its pools
// (poolUse). With the database rather than in common/metrics/: shared helpers know no storage.
import { Counter, Gauge, type Registry } from "prom-client";
import { type Pool, poolUse } from "./client.ts";

/** `pools`: label value → pool. The same pool under two names is reported once. */
export function registerPoolMetrics(registry: Registry, pools: Record<string, Pool>): void {
  const seen = new Set<Pool>();
  const named = Object.entries(pools).filter(([, p]) => !seen.has(p) && seen.add(p));
  const each = (f: (pool: string, use: NonNullable<ReturnType<typeof poolUse>>) => void) => {
    for (const [name, p] of named) {
      const use = poolUse(p);
      if (use) f(name, use);
    }
  };
  new Gauge({
    name: "voice_db_pool_queries_in_flight",
    help: "Queries and transactions this process has issued on the database pool that have not " +
      "settled: waiting for a connection or running (a transaction counts once). Measured by a " +
      "counting wrapper around the pool: postgres.js exposes no connection counts. Above " +
      "voice_db_pool_max_connections, the excess is queued for a connection.",
    labelNames: ["pool"],
    registers: [registry],
    collect() {
      each((pool, use) => this.set({ pool }, use.inFlight));
    },
  });
  new Gauge({
    name: "voice_db_pool_max_connections",
    help: "Connections the database pool may open (its configured max).",
    labelNames: ["pool"],
    registers: [registry],
    collect() {
      each((pool, use) => this.set({ pool }, use.max));
    },
  });
  new Counter({
    name: "voice_db_pool_queries_total",
    help: "Queries and transactions this process has issued on the database pool.",
    labelNames: ["pool"],
    registers: [registry],
    collect() {
      this.reset();
      each((pool, use) => this.inc({ pool }, use.issued));
    },
  });
}
