// Streamable HTTP MCP at /mcp on the API, for operators' agents that speak MCP over HTTP.
// Stateless: a fresh server and transport per request, so nothing is kept between requests
// and any API process can answer any request.
import type { Context, Hono } from "hono";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ApiError, errorResponse } from "../../common/http/errors.ts";
import { bearerToken } from "../../common/http/bearer.ts";
import { isAdminToken } from "../auth/credentials.ts";
import { type AdminCall, createMcpServer } from "./tools.ts";

function presentsAdminToken(c: Context, adminToken: string): boolean {
  return isAdminToken(bearerToken(c), adminToken);
}

/**
 * Calls the admin routes on the same Hono app in-process (no network hop), as the admin,
 * under the outer request's correlation id so one MCP call greps as one story in the logs.
 */
export function inProcessCall(app: Hono, adminToken: string, correlationId?: string): AdminCall {
  return async (path, body) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${adminToken}`,
      "content-type": "application/json",
    };
    if (correlationId) headers["x-correlation-id"] = correlationId;
    const res = await app.request(path, { method: "POST", headers, body: JSON.stringify(body) });
    const text = await res.text();
    try {
      return { status: res.status, body: text ? JSON.parse(text) : null };
    } catch {
      return { status: res.status, body: text };
    }
  };
}

/** Mounts the MCP endpoint at `/mcp` on `app`, guarded by the admin token. */
export function mountMcp(app: Hono, adminToken: string): void {
  app.all("/mcp", async (c) => {
    if (!presentsAdminToken(c, adminToken)) {
      return errorResponse(
        c,
        new ApiError(401, "unauthorized", "Send Authorization: Bearer <admin token>."),
      );
    }
    // Stateless mode has no server-initiated stream to offer: a GET would otherwise open an
    // SSE stream nobody writes to (kept alive by a timer), and there is no session to DELETE.
    if (c.req.method !== "POST") {
      return errorResponse(
        c,
        new ApiError(405, "method_not_allowed", "Use POST for MCP requests.", {}, {
          Allow: "POST",
        }),
      );
    }
    const server = createMcpServer(inProcessCall(app, adminToken, c.get("correlationId")));
    // JSON replies rather than SSE: every tool answers once, so the response is complete when
    // handleRequest resolves and the pair can be closed straight away.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
}
