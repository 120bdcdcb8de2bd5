// The MCP tools for an agent's redaction (issue 37): shims over agents.redaction.get/set, which
// validate and refuse (tools.ts says why), so MCP refuses exactly what the admin API refuses.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { CATEGORIES } from "../../common/redaction.ts";

type Forward = (path: string) => (args: Record<string, unknown>) => Promise<CallToolResult>;

const agentId = z.string().min(1).describe("The agent id (ag_...).");

export function registerRedactionTools(server: McpServer, forward: Forward): void {
  server.registerTool("get_agent_redaction", {
    title: "Get agent redaction",
    description: "The categories the worker redacts from an agent's session records, " +
      "transcripts and logs before they are written (empty: none).",
    inputSchema: { agent_id: agentId },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/agents.redaction.get"));

  server.registerTool("set_agent_redaction", {
    title: "Set agent redaction",
    description: "Replace the categories redacted from an agent's calls that start from now " +
      `on: any of ${CATEGORIES.join(", ")}; an empty list turns redaction off. Each match is ` +
      "kept as a placeholder such as [card]; the brain still receives the caller's words.",
    inputSchema: {
      agent_id: agentId,
      // Strings, checked by the route, so an unknown category is refused as the API refuses it.
      categories: z.array(z.string()).describe(`Categories: ${CATEGORIES.join(", ")}.`),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  }, forward("/api/v1/agents.redaction.set"));
}
