// The Hono app: routes only. Building the dependencies is api/service.ts's job.
import { Hono } from "hono";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { ApiError, handleErrors } from "../common/http/errors.ts";
import { correlation } from "../common/http/correlation.ts";
import type { ApiDeps } from "./context.ts";
import * as connectRoutes from "./connect/route.ts";
import * as dialRoutes from "./dial/route.ts";
import { logRefusedConnects } from "./connect/refusal_log.ts";
import * as sessions from "./admin/sessions.ts";
import { adminRoutes } from "./admin/routes.ts";
import { capabilities } from "./capabilities.ts";
import { mountMcp } from "./mcp/http.ts";
import { mountConsole } from "./console/mod.ts";
import { logger } from "../common/log.ts";
import { adminAuth, mountGuarded } from "./auth/admin_auth.ts";
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
  app.use("/api/v1/calls.dial", refusals);

  const route = (h: Handler) => (c: Context) => h(c, deps);
  app.post("/api/v1/sessions.connect", route(connectRoutes.connect));
  app.post("/api/v1/sessions.create", route(connectRoutes.create));
  app.post("/api/v1/calls.dial", route(dialRoutes.dial));
  app.post("/api/v1/sessions.get", route(sessions.get));
  app.post("/api/v1/sessions.list", route(sessions.list));
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
  // Agents, keys, trunks, numbers and /metrics: the admin token only, checked once for the group.
  mountGuarded(app, adminRoutes(deps), adminAuth(deps.adminToken));
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
