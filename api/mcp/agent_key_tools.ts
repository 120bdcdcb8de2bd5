// The MCP tools that complete the agent and key management the admin CLI has: one agent read,
// changed or deleted, and an agent's keys made, listed and revoked. Shims over the agents.* and
// keys.* admin routes, which check the admin token and validate, refuse and shape every reply
// (tools.ts says why), so MCP refuses exactly what the admin API refuses.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SENSITIVITY_LEVELS } from "../../common/turn_sensitivity.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ECHO_CANCELLATION } from "../../common/echo_cancellation.ts";

/** An agent's echo cancellation, as the admin API takes it (docs/echo.md). */
export const echoCancellationArg = z.enum(ECHO_CANCELLATION).optional().describe(
  "Cancel the bot's echo on the caller's line: auto (default: on for phone lines, off for web " +
    "calls, whose browser already cancels it), on, or off.",
);

type Forward = (path: string) => (args: Record<string, unknown>) => Promise<CallToolResult>;

const agentId = z.string().min(1).describe("The agent id (ag_...).");

/** An agent's turn sensitivity (common/turn_sensitivity.ts; docs/turn-taking.md). */
export const sensitivitySchema = {
  interruption_sensitivity: z.enum(SENSITIVITY_LEVELS).optional().describe(
    "How readily the bot stops when the caller speaks over it: low, medium (default) or high " +
      "(high: backchannels such as 'yeah' stop it too).",
  ),
  turn_patience: z.enum(SENSITIVITY_LEVELS).optional().describe(
    "How long the bot waits at the caller's pauses before answering: low (x0.75), medium " +
      "(default) or high (x1.5).",
  ),
};

export function registerAgentKeyTools(server: McpServer, forward: Forward): void {
  server.registerTool("get_agent", {
    title: "Get agent",
    description: "One agent: its workspace, name, brain URL and recording default.",
    inputSchema: { agent_id: agentId },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/agents.get"));

  server.registerTool("update_agent", {
    title: "Update agent",
    description: "Change an agent's name, brain URL, recording default, turn sensitivity or " +
      "echo cancellation; fields left out stay.",
    inputSchema: {
      agent_id: agentId,
      name: z.string().min(1).optional().describe("New human-readable name."),
      brain_url: z.string().min(1).optional().describe("New brain WebSocket URL (ws://, wss://)."),
      record_by_default: z.boolean().optional().describe("Record calls unless told otherwise."),
      ...sensitivitySchema,
      echo_cancellation: echoCancellationArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  }, forward("/api/v1/agents.update"));

  server.registerTool("delete_agent", {
    title: "Delete agent",
    description: "Delete an agent and revoke all its keys at once; its past sessions stay " +
      "readable.",
    inputSchema: { agent_id: agentId },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, forward("/api/v1/agents.delete"));

  server.registerTool("create_key", {
    title: "Create key",
    description: "A new key for an agent, returned once as session_key (only its hash is " +
      "kept). secret (sk_) is for the customer's server; publishable (pk_) is for web pages " +
      "and works only from its allowed origins.",
    inputSchema: {
      agent_id: agentId,
      // Checked by the route, so a wrong kind is refused as the admin API refuses it.
      kind: z.string().min(1).describe("secret or publishable."),
      allowed_origins: z.array(z.string().min(1)).optional().describe(
        "Publishable keys only: origins (scheme://host[:port]) whose pages may use it.",
      ),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/keys.create"));

  server.registerTool("list_keys", {
    title: "List keys",
    description: "An agent's keys: ids, kinds, origins, when made and revoked (never the key).",
    inputSchema: { agent_id: agentId },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/keys.list"));

  server.registerTool("revoke_key", {
    title: "Revoke key",
    description: "Revoke a key at once on every API process; calls it started go on.",
    inputSchema: { key_id: z.string().min(1).describe("The key id (key_...), from list_keys.") },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, forward("/api/v1/keys.revoke"));
}
