// A second listener that serves only `GET /metrics`, without credentials, for a scraper on a
// private network (METRICS_PORT). Everything else is 404 in the API's error envelope.
import { Hono } from "hono";
import type { Registry } from "prom-client";
import { correlation } from "../http/correlation.ts";
import { handleErrors } from "../http/errors.ts";
import { logger } from "../log.ts";
import { metricsResponse } from "./http.ts";

const log = logger("metrics");

export interface MetricsListener {
  /** The port bound (useful with port 0). */
  port: number;
  /** Stops listening; resolves when the server has finished. */
  close(): Promise<void>;
}

export function metricsApp(registry: Registry): Hono {
  const app = new Hono();
  app.use("*", correlation);
  app.get("/metrics", () => metricsResponse(registry));
  handleErrors(app, log);
  return app;
}

export function startMetricsListener(
  options: { hostname: string; port: number; registry: Registry },
): MetricsListener {
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    onListen: ({ hostname, port }) => log.info("metrics listening", { hostname, port }),
  }, metricsApp(options.registry).fetch);
  return {
    port: server.addr.port,
    close: () => server.shutdown(),
  };
}
