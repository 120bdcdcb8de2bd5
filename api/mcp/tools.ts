// The MCP tools, defined once. Each tool is a thin shim over an admin JSON route: the route
// stays the one place that validates, authorizes and shapes replies, so stdio and HTTP (and
// the admin CLI) cannot drift apart.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { sensitivitySchema } from "./agent_key_tools.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { registerPhoneTools } from "./phone_tools.ts";
import { echoCancellationArg, registerAgentKeyTools } from "./agent_key_tools.ts";
import { registerCampaignTools } from "./campaign_tools.ts";
import { registerRedactionTools } from "./redaction_tools.ts";
import { registerWebhookTools } from "./webhook_tools.ts";
import { registerStorageTools } from "./storage_tools.ts";

/** A reply from an admin route: the HTTP status and the parsed JSON body (or raw text). */
export interface AdminReply {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/**
 * Invokes an admin JSON route (`/api/v1/<name>`) with the admin token. The transport decides
 * how: over the network for stdio, in-process for the API's own `/mcp`.
 */
export type AdminCall = (path: string, body: unknown) => Promise<AdminReply>;

const SERVER_INFO = { name: "voice-call-admin", version: "1.0.0" };

/**
 * Turns an admin reply into a tool result. A refusal becomes a tool error (isError) that
 * carries the envelope's code and message, so the model sees why and can correct itself
 * rather than the whole JSON-RPC request failing.
 */
export function toToolResult(reply: AdminReply): CallToolResult {
  const ok = reply.status >= 200 && reply.status < 300;
  if (ok && reply.body && typeof reply.body === "object") {
    return {
      content: [{ type: "text", text: JSON.stringify(reply.body, null, 2) }],
      structuredContent: reply.body,
    };
  }
  const error = reply.body?.error;
  const code = typeof error?.code === "string" ? error.code : `http_${reply.status}`;
  const message = typeof error?.message === "string"
    ? error.message
    : `Unexpected reply (HTTP ${reply.status}).`;
  const envelope = error ? reply.body : { error: { code, message, details: {} } };
  return {
    isError: true,
    content: [
      { type: "text", text: `${code}: ${message}` },
      { type: "text", text: JSON.stringify(envelope, null, 2) },
    ],
  };
}

/** A fresh MCP server whose tools call the admin routes through `call`. */
export function createMcpServer(call: AdminCall): McpServer {
  const server = new McpServer(SERVER_INFO);
  // The routes validate and shape everything, so a tool only forwards its arguments. (The
  // parameter type is spelled out because TypeScript cannot infer it through registerTool's
  // overloaded generics here.)
  const forward = (path: string) => async (args: Record<string, unknown>) =>
    toToolResult(await call(path, args));

  server.registerTool("create_agent", {
    title: "Create agent",
    description: "Create an agent in a workspace (tenant). Returns the agent and its first " +
      "secret key as session_key (sk_...): it is shown only this once, so keep it.",
    inputSchema: {
      tenant: z.string().min(1).describe("Workspace the agent belongs to, e.g. acme."),
      name: z.string().min(1).describe("Human-readable agent name."),
      brain_url: z.string().min(1).describe("The brain's WebSocket URL (ws:// or wss://)."),
      record_by_default: z.boolean().optional().describe(
        "Record calls unless the caller says otherwise (default false).",
      ),
      ...sensitivitySchema,
      echo_cancellation: echoCancellationArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/agents.create"));

  server.registerTool("list_agents", {
    title: "List agents",
    description: "List agents, optionally only those of one workspace (tenant).",
    inputSchema: { tenant: z.string().min(1).optional().describe("Only this workspace.") },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/agents.list"));

  server.registerTool("get_session", {
    title: "Get session",
    description: "The session record: status, timings, recording, agent input, log and usage.",
    inputSchema: { session_id: z.string().min(1).describe("The session id (from connect).") },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/sessions.get"));

  server.registerTool("list_sessions", {
    title: "List sessions",
    description: "Sessions, newest first, optionally filtered; pass next_cursor back as cursor " +
      "for the next page.",
    inputSchema: {
      agent_id: z.string().min(1).optional().describe("Only this agent's sessions."),
      // Statuses are checked by the route, the one source of truth for the allowed set.
      status: z.string().min(1).optional().describe(
        "created, connecting, active, ended, failed or expired.",
      ),
      limit: z.number().int().optional().describe("Page size, 1 to 200 (default 50)."),
      cursor: z.string().min(1).optional().describe("next_cursor of the previous page."),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/sessions.list"));

  registerAgentKeyTools(server, forward);
  registerRedactionTools(server, forward);
  registerPhoneTools(server, forward);
  registerCampaignTools(server, forward);
  registerWebhookTools(server, forward);
  registerStorageTools(server, forward);
  return server;
}
