// The MCP tools for an agent's bucket and retention (issue 37): shims over storage.* admin
// routes, which validate and shape every reply (tools.ts says why).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

type Forward = (path: string) => (args: Record<string, unknown>) => Promise<CallToolResult>;

const agentId = z.string().min(1).describe("The agent id (ag_...).");

export function registerStorageTools(server: McpServer, forward: Forward): void {
  server.registerTool("set_agent_storage", {
    title: "Set an agent's bucket and retention",
    description: "Where the agent's call recordings (WAV) and transcripts (JSON) are stored: an " +
      "S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, GCS interop), and how many days " +
      "sessions and recordings are kept. Fields not given keep their value.",
    inputSchema: {
      agent_id: agentId,
      bucket: z.string().min(1).optional().describe("The bucket's name."),
      prefix: z.string().optional().describe(
        "Key prefix: objects are {prefix}/{agent}/{session}.wav/.json.",
      ),
      region: z.string().min(1).optional().describe("The bucket's region (us-east-1; R2: auto)."),
      endpoint: z.string().optional().describe(
        "http(s)://host[:port] of an S3-compatible service; empty for AWS S3 itself.",
      ),
      access_key_id: z.string().min(1).optional().describe(
        "Access key id that may PUT and DELETE.",
      ),
      secret_access_key: z.string().min(1).optional().describe(
        "Its secret: kept sealed under TRUNK_CREDENTIALS_KEY, never shown again " +
          "(replies say secret_access_key_set: true).",
      ),
      retention_days: z.number().int().optional().describe(
        "Sessions and recordings older than this many days are deleted; 0 keeps them.",
      ),
      remove_bucket: z.boolean().optional().describe("true: recordings stay on the worker."),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  }, forward("/api/v1/storage.set"));

  server.registerTool("get_agent_storage", {
    title: "Get an agent's bucket and retention",
    description: "The agent's bucket, prefix, region, endpoint, access key id, whether a secret " +
      "is set (never the secret) and retention_days; null when none is set.",
    inputSchema: { agent_id: agentId },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/storage.get"));

  server.registerTool("remove_agent_storage", {
    title: "Remove an agent's bucket and retention",
    description: "Recordings stay on the worker and sessions are kept; objects already stored " +
      "stay in the bucket.",
    inputSchema: { agent_id: agentId },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, forward("/api/v1/storage.remove"));
}
