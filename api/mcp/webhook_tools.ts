// The MCP tools for webhook endpoints and their delivery log: shims over the webhooks.* admin
// routes, which validate, refuse and shape every reply (tools.ts says why).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

type Forward = (path: string) => (args: Record<string, unknown>) => Promise<CallToolResult>;

const endpointId = z.string().min(1).describe("The endpoint id (whk_...).");
const eventTypes = z.array(z.string().min(1)).optional().describe(
  "Only these events (session.started, session.ended, recording.stored, phone.transfer, " +
    "phone.keypad, campaign.attempt_done); none: all.",
);

export function registerWebhookTools(server: McpServer, forward: Forward): void {
  server.registerTool("create_webhook", {
    title: "Create webhook endpoint",
    description: "An endpoint the service POSTs events to, signed as Standard Webhooks says. " +
      "Give agent_id (one agent's calls) or tenant (every agent of the workspace). Returns " +
      "the signing secret (whsec_...) only this once. URLs must be https:// (http:// only " +
      "to 127.0.0.1 or localhost).",
    inputSchema: {
      agent_id: z.string().min(1).optional().describe("One agent's calls (ag_...)."),
      tenant: z.string().min(1).optional().describe("Every agent of this workspace."),
      url: z.string().min(1).describe("Where events are POSTed."),
      description: z.string().optional().describe("A note for people."),
      event_types: eventTypes,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/webhooks.create"));

  server.registerTool("list_webhooks", {
    title: "List webhook endpoints",
    description: "Endpoints (never their secrets), optionally one agent's or one workspace's.",
    inputSchema: {
      agent_id: z.string().min(1).optional().describe("Only this agent's endpoints."),
      tenant: z.string().min(1).optional().describe("Only this workspace's endpoints."),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/webhooks.list"));

  server.registerTool("update_webhook", {
    title: "Update webhook endpoint",
    description: "Change an endpoint's URL, description, event types, or enable/disable it.",
    inputSchema: {
      endpoint_id: endpointId,
      url: z.string().min(1).optional(),
      description: z.string().optional(),
      event_types: eventTypes,
      enabled: z.boolean().optional().describe("false: nothing new is queued or sent."),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  }, forward("/api/v1/webhooks.update"));

  server.registerTool("delete_webhook", {
    title: "Delete webhook endpoint",
    description: "Delete an endpoint; what it was still owed is given up, its log stays.",
    inputSchema: { endpoint_id: endpointId },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, forward("/api/v1/webhooks.delete"));

  server.registerTool("list_webhook_deliveries", {
    title: "Webhook delivery log",
    description: "An endpoint's deliveries, newest first: event, status, attempts, last code.",
    inputSchema: {
      endpoint_id: endpointId,
      session_id: z.string().min(1).optional(),
      status: z.string().min(1).optional().describe("pending, delivered or failed."),
      limit: z.number().int().optional().describe("1 to 500 (default 50)."),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/webhooks.deliveries"));

  server.registerTool("redeliver_webhook", {
    title: "Redeliver webhook",
    description: "Send a delivery again now, with the same webhook-id, whatever became of it.",
    inputSchema: { delivery_id: z.string().min(1).describe("From list_webhook_deliveries.") },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/webhooks.redeliver"));
}
