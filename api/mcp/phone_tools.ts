// The MCP tools for phone numbers and SIP trunks: shims over the numbers.* and trunks.* admin
// routes, which validate and shape every reply (tools.ts says why).
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

type Forward = (path: string) => (args: Record<string, unknown>) => Promise<CallToolResult>;

const trunkId = z.string().min(1).describe("The trunk id (trk_...).");
const number = z.string().min(1).describe("The phone number in E.164, e.g. +14155550100.");
const sources = z.array(z.string().min(1)).describe(
  "Source addresses the trunk's calls come from: IPs or CIDR ranges, e.g. 54.172.60.0/30.",
);
const auth = {
  auth_username: z.string().min(1).optional().describe("Digest username the trunk sends."),
  auth_password: z.string().min(1).optional().describe(
    "Digest password (12-128 characters); only its hashes are kept, it is never shown again.",
  ),
  auth_realm: z.string().min(1).optional().describe("Digest realm (default voice)."),
};

const outbound = {
  outbound_address: z.string().min(1).optional().describe(
    "Where calls placed over the trunk go (calls.dial): host or host:port of its SIP edge " +
      "(port 5060 when none is given).",
  ),
  outbound_transport: z.enum(["udp", "tcp"]).optional().describe("udp (default) or tcp."),
  outbound_username: z.string().min(1).optional().describe(
    "Digest username for the trunk's challenges to calls placed over it.",
  ),
  outbound_password: z.string().min(1).optional().describe(
    "Its password: kept sealed under TRUNK_CREDENTIALS_KEY, never shown again " +
      "(replies say outbound_credentials: true).",
  ),
};

export function registerPhoneTools(server: McpServer, forward: Forward): void {
  server.registerTool("create_trunk", {
    title: "Create SIP trunk",
    description: "A SIP trunk that may send calls to phone numbers: an allowlist of source " +
      "addresses, digest credentials, or both (an allowlisted source skips the challenge).",
    inputSchema: {
      name: z.string().min(1).describe("A name for operators."),
      ...auth,
      allowed_sources: sources.optional(),
      ...outbound,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/trunks.create"));

  server.registerTool("list_trunks", {
    title: "List SIP trunks",
    description: "Every trunk, with its allowlist and digest username and realm (no secrets).",
    inputSchema: {},
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/trunks.list"));

  server.registerTool("get_trunk", {
    title: "Get SIP trunk",
    description: "One trunk.",
    inputSchema: { trunk_id: trunkId },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/trunks.get"));

  server.registerTool("update_trunk", {
    title: "Update SIP trunk",
    description: "Change a trunk's name, allowlist or credentials; a new username or realm " +
      "needs the password again; remove_auth drops the credentials.",
    inputSchema: {
      trunk_id: trunkId,
      name: z.string().min(1).optional(),
      allowed_sources: sources.optional(),
      ...auth,
      remove_auth: z.boolean().optional().describe("Drop the digest credentials."),
      ...outbound,
      remove_outbound_credentials: z.boolean().optional().describe(
        "Drop the outbound username and password.",
      ),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  }, forward("/api/v1/trunks.update"));

  server.registerTool("delete_trunk", {
    title: "Delete SIP trunk",
    description: "Delete a trunk no phone number uses (refused while one does).",
    inputSchema: { trunk_id: trunkId },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, forward("/api/v1/trunks.delete"));

  server.registerTool("create_phone_number", {
    title: "Add phone number",
    description: "Point an E.164 number at an agent; with trunk_id only that trunk may send " +
      "its calls (without one, any caller that reaches the SIP address may).",
    inputSchema: {
      number,
      agent_id: z.string().min(1).describe("The agent that answers the number's calls."),
      trunk_id: trunkId.optional(),
      enabled: z.boolean().optional().describe("Takes calls (default true)."),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/numbers.create"));

  server.registerTool("list_phone_numbers", {
    title: "List phone numbers",
    description: "Phone numbers, optionally only one agent's or one trunk's.",
    inputSchema: {
      agent_id: z.string().min(1).optional(),
      trunk_id: trunkId.optional(),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/numbers.list"));

  server.registerTool("get_phone_number", {
    title: "Get phone number",
    description: "One phone number: its agent, trunk and whether it takes calls.",
    inputSchema: { number },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/numbers.get"));

  server.registerTool("update_phone_number", {
    title: "Update phone number",
    description: "Move a number to another agent or trunk (trunk_id null: none), or turn it " +
      "off and on.",
    inputSchema: {
      number,
      agent_id: z.string().min(1).optional(),
      trunk_id: z.string().min(1).nullable().optional(),
      enabled: z.boolean().optional(),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  }, forward("/api/v1/numbers.update"));

  server.registerTool("delete_phone_number", {
    title: "Delete phone number",
    description: "Stop answering a number (its INVITEs get 404 from then on).",
    inputSchema: { number },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  }, forward("/api/v1/numbers.delete"));
}
