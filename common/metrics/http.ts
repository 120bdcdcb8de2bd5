// `GET /metrics` in the Prometheus text format, and the admin check it has on a main port.
import type { Context } from "hono";
import type { Registry } from "prom-client";
import { bearerToken, sameSecret } from "../http/bearer.ts";
import { ApiError } from "../http/errors.ts";

/** The registry's exposition, with the registry's own content type. */
export async function metricsResponse(registry: Registry): Promise<Response> {
  return new Response(await registry.metrics(), {
    headers: { "content-type": registry.contentType },
  });
}

/**
 * Throws 401 `unauthorized` unless the request carries `Authorization: Bearer <adminToken>`. With
 * no admin token configured nothing is accepted: metrics on a main port are never open (the
 * unauthenticated way is the separate METRICS_PORT listener).
 */
export function requireMetricsToken(c: Context, adminToken: string | undefined): void {
  const presented = bearerToken(c);
  if (adminToken && presented !== undefined && sameSecret(presented, adminToken)) return;
  throw new ApiError(
    401,
    "unauthorized",
    adminToken
      ? "Send Authorization: Bearer <admin token> for /metrics."
      : "This node has no admin token: /metrics is served only on METRICS_PORT.",
  );
}
