// Recordings waiting for their bucket, as gauges read from recording_uploads at each scrape
// (issue 37): an upload that keeps failing shows here, not only in the session log.
import { Gauge, type Registry } from "prom-client";
import type { Sql } from "../../db/client.ts";
import { logger } from "../../common/log.ts";

const log = logger("storage");

export function registerStorageMetrics(registry: Registry, sql: Sql): void {
  new Gauge({
    name: "voice_recording_uploads_pending",
    help: "Recordings not yet in their agent's bucket, by whether an upload already failed " +
      "(failing: attempts > 0; kept locally and retried).",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      try {
        const [r] = await sql<{ waiting: number; failing: number }[]>`
          select count(*) filter (where attempts = 0)::int as waiting,
            count(*) filter (where attempts > 0)::int as failing
          from recording_uploads where status = 'pending'`;
        this.set({ state: "waiting" }, r.waiting);
        this.set({ state: "failing" }, r.failing);
      } catch (err) {
        log.warn("could not read recording_uploads for the metrics", {
          cause: (err as Error).message,
        });
      }
    },
  });
}
