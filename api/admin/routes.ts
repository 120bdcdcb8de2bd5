// The admin route group: everything only the admin token may call. api/app.ts mounts it behind
// api/auth/admin_auth.ts, so none of these handlers checks the caller.
import { Hono } from "hono";
import type { Context } from "hono";
import type { ApiDeps } from "../context.ts";
import { metricsResponse } from "../../common/metrics/http.ts";
import * as agents from "./agents.ts";
import * as keys from "./keys.ts";
import * as trunks from "./trunks.ts";
import * as numbers from "./numbers.ts";
import * as campaigns from "./campaigns.ts";
import * as redaction from "./redaction.ts";
import * as webhooks from "./webhooks.ts";
import * as storage from "./agent_storage.ts";

type Handler = (c: Context, deps: ApiDeps) => Response | Promise<Response>;

export function adminRoutes(deps: ApiDeps): Hono {
  const group = new Hono();
  const route = (h: Handler) => (c: Context) => h(c, deps);
  const crud = [["agents", agents], ["trunks", trunks], ["numbers", numbers]] as const;
  for (const [noun, m] of crud) {
    group.post(`/api/v1/${noun}.create`, route(m.create));
    group.post(`/api/v1/${noun}.list`, route(m.list));
    group.post(`/api/v1/${noun}.get`, route(m.get));
    group.post(`/api/v1/${noun}.update`, route(m.update));
    group.post(`/api/v1/${noun}.delete`, route(m.remove));
  }
  for (const verb of ["create", "list", "get", "pause", "resume", "cancel"] as const) {
    group.post(`/api/v1/campaigns.${verb}`, route(campaigns[verb]));
  }
  group.post("/api/v1/campaigns.contacts", route(campaigns.contacts));
  group.post("/api/v1/campaigns.attempts", route(campaigns.attempts));
  group.post("/api/v1/agents.redaction.get", route(redaction.get));
  group.post("/api/v1/agents.redaction.set", route(redaction.set));
  for (const verb of ["set", "get", "remove"] as const) {
    group.post(`/api/v1/storage.${verb}`, route(storage[verb]));
  }
  group.post("/api/v1/keys.create", route(keys.create));
  group.post("/api/v1/keys.list", route(keys.list));
  group.post("/api/v1/keys.revoke", route(keys.revoke));
  for (
    const verb of [
      "create",
      "list",
      "get",
      "update",
      "deliveries",
      "attempts",
      "redeliver",
    ] as const
  ) {
    group.post(`/api/v1/webhooks.${verb}`, route(webhooks[verb]));
  }
  group.post("/api/v1/webhooks.delete", route(webhooks.remove));
  // Prometheus text with the admin token; METRICS_PORT serves it without (common/metrics/).
  group.get("/metrics", () => metricsResponse(deps.metrics.registry));
  return group;
}
