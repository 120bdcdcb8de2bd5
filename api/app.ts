// The Hono app: routes only. Building the dependencies is api/service.ts's job.
import { Hono } from "hono";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { ApiError, handleErrors } from "../common/http/errors.ts";
import { correlation } from "../common/http/correlation.ts";
import type { ApiDeps } from "./context.ts";
import * as connectRoutes from "./connect/route.ts";
import { logRefusedConnects } from "./connect/refusal_log.ts";
import * as agents from "./admin/agents.ts";
import * as keys from "./admin/keys.ts";
import * as sessions from "./admin/sessions.ts";
import * as trunks from "./admin/trunks.ts";
import * as numbers from "./admin/numbers.ts";
import { capabilities } from "./capabilities.ts";
import { mountMcp } from "./mcp/http.ts";
import { mountConsole } from "./console/mod.ts";
import { logger } from "../common/log.ts";
import { metricsResponse } from "../common/metrics/http.ts";
import { requireAdmin } from "./auth/credentials.ts";
import { CARRIERS } from "./telephony/carriers.ts";

const log = logger("api");

type Handler = (c: Context, deps: ApiDeps) => Response | Promise<Response>;

/** Errors the database driver raises when it cannot reach the server. */
function isUnreachable(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? "";
  return /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|CONNECT_TIMEOUT|CONNECTION_|ENOTFOUND)/.test(code) ||
    code === "57P01" || code === "57P03";
}

export function createApp(deps: ApiDeps, extend?: (app: Hono) => void): Hono {
  const app = new Hono();
  app.use("*", correlation);
  app.use("*", deps.metrics.middleware);
  // CORS on sessions.connect only: any origin may ask; the pk_ allowlist then decides.
  app.use(
    "/api/v1/sessions.connect",
    cors({
      origin: (origin) => origin,
      allowMethods: ["POST", "OPTIONS"],
      allowHeaders: ["Authorization", "Content-Type", "X-Correlation-Id"],
      exposeHeaders: ["X-Correlation-Id", "Retry-After"],
      maxAge: 600,
    }),
  );
  // The capabilities are public (no credential): a customer's page builds its pickers from them.
  app.use("/api/v1/capabilities", cors({ origin: "*", allowMethods: ["GET"], maxAge: 600 }));

  // Refused connects (401/403) show in the service's log, a few a minute at most.
  const refusals = logRefusedConnects(deps.addressLimit.trusted);
  app.use("/api/v1/sessions.connect", refusals);
  app.use("/api/v1/sessions.create", refusals);

  const route = (h: Handler) => (c: Context) => h(c, deps);
  app.post("/api/v1/sessions.connect", route(connectRoutes.connect));
  app.post("/api/v1/sessions.create", route(connectRoutes.create));
  app.post("/api/v1/sessions.get", route(sessions.get));
  app.post("/api/v1/sessions.list", route(sessions.list));
  app.post("/api/v1/agents.create", route(agents.create));
  app.post("/api/v1/agents.list", route(agents.list));
  app.post("/api/v1/agents.get", route(agents.get));
  app.post("/api/v1/agents.update", route(agents.update));
  app.post("/api/v1/agents.delete", route(agents.remove));
  app.post("/api/v1/keys.create", route(keys.create));
  app.post("/api/v1/keys.list", route(keys.list));
  app.post("/api/v1/keys.revoke", route(keys.revoke));
  app.post("/api/v1/trunks.create", route(trunks.create));
  app.post("/api/v1/trunks.list", route(trunks.list));
  app.post("/api/v1/trunks.get", route(trunks.get));
  app.post("/api/v1/trunks.update", route(trunks.update));
  app.post("/api/v1/trunks.delete", route(trunks.remove));
  app.post("/api/v1/numbers.create", route(numbers.create));
  app.post("/api/v1/numbers.list", route(numbers.list));
  app.post("/api/v1/numbers.get", route(numbers.get));
  app.post("/api/v1/numbers.update", route(numbers.update));
  app.post("/api/v1/numbers.delete", route(numbers.remove));
  app.get("/api/v1/capabilities", route(capabilities));
  // Telephony providers' voice webhooks (docs/telephony-websocket.md): the agent is the URL's, or
  // the dialled number's.
  for (const carrier of Object.values(CARRIERS)) {
    for (const { method, path, handler } of carrier.webhooks) {
      app.on(method, `/api/v1/telephony/${carrier.name}${path}`, route(handler));
    }
  }
  app.get("/healthz", async (c) => {
    try {
      await deps.sql`select 1`;
      return c.json({ ok: true, database: "up" });
    } catch {
      return c.json({ ok: false, database: "down" }, 503);
    }
  });
  // Prometheus text with the admin token; METRICS_PORT serves it without (common/metrics/).
  app.get("/metrics", (c) => {
    requireAdmin(c, deps);
    return metricsResponse(deps.metrics.registry);
  });
  mountMcp(app, deps.adminToken);
  mountConsole(app, deps);
  extend?.(app);

  handleErrors(
    app,
    log,
    (err) =>
      isUnreachable(err)
        ? new ApiError(503, "unavailable", "The service cannot reach its database; retry shortly.")
        : undefined,
  );
  return app;
}
