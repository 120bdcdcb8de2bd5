// The MCP tools for outbound campaigns: shims over the campaigns.* admin routes, which validate
// and shape every reply (tools.ts says why), so a tool refuses exactly what the route refuses.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

type Forward = (path: string) => (args: Record<string, unknown>) => Promise<CallToolResult>;

const campaignId = z.string().min(1).describe("The campaign id (cmp_...).");
const contact = z.object({
  number: z.string().min(1).describe("E.164, e.g. +919810000000."),
  data: z.record(z.string(), z.unknown()).optional().describe("What the brain is given."),
  language: z.string().min(1).optional().describe("BCP 47, e.g. hi-IN."),
  time_zone: z.string().min(1).optional().describe("IANA zone (default: the campaign's)."),
});

export function registerCampaignTools(server: McpServer, forward: Forward): void {
  server.registerTool("create_campaign", {
    title: "Create campaign",
    description: "An outbound campaign: an agent calls each contact from a workspace number, " +
      "at most `concurrency` at once, only inside the calling window in the contact's own time " +
      "zone (default 09:00-21:00 Asia/Kolkata), retrying no_answer and busy by default.",
    inputSchema: {
      agent_id: z.string().min(1).describe("The agent that talks (ag_...)."),
      name: z.string().min(1).describe("A name for operators."),
      from: z.string().min(1).describe("E.164 number of the agent's workspace to call from."),
      contacts: z.array(contact).describe("1 to 10,000 contacts."),
      trunk_id: z.string().min(1).optional(),
      starts_at: z.string().min(1).optional().describe("ISO 8601; absent: at once."),
      concurrency: z.number().int().optional().describe("Calls at once, 1-1000 (default 1)."),
      window_start: z.string().optional().describe("HH:MM local (default 09:00)."),
      window_end: z.string().optional().describe("HH:MM local (default 21:00)."),
      time_zone: z.string().optional().describe("IANA zone (default Asia/Kolkata)."),
      max_attempts: z.number().int().optional().describe("1-10 (default 3)."),
      retry_backoff_seconds: z.number().int().optional().describe("Default 1800."),
      retry_on: z.array(z.string()).optional().describe("Outcomes retried (no_answer, busy)."),
      ring_timeout_seconds: z.number().int().optional().describe("5-120 (default 30)."),
      machine_detection: z.string().optional().describe("off, hang_up or leave_message."),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  }, forward("/api/v1/campaigns.create"));

  server.registerTool("list_campaigns", {
    title: "List campaigns",
    description: "Campaigns, newest first, each with its progress (contacts by state, " +
      "attempts by outcome).",
    inputSchema: {
      agent_id: z.string().min(1).optional(),
      workspace_id: z.string().min(1).optional(),
      status: z.string().min(1).optional().describe(
        "scheduled, running, paused, cancelled or done.",
      ),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/campaigns.list"));

  server.registerTool("get_campaign", {
    title: "Get campaign",
    description: "One campaign and its progress.",
    inputSchema: { campaign_id: campaignId },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/campaigns.get"));

  for (
    const [verb, description, destructive] of [
      ["pause", "Stop placing new calls; calls in progress go on.", false],
      ["resume", "Place calls again after a pause.", false],
      [
        "cancel",
        "End the campaign: pending contacts are cancelled; calls in progress go on.",
        true,
      ],
    ] as const
  ) {
    server.registerTool(`${verb}_campaign`, {
      title: `${verb[0].toUpperCase()}${verb.slice(1)} campaign`,
      description,
      inputSchema: { campaign_id: campaignId },
      annotations: { readOnlyHint: false, destructiveHint: destructive, idempotentHint: false },
    }, forward(`/api/v1/campaigns.${verb}`));
  }

  server.registerTool("list_campaign_contacts", {
    title: "List campaign contacts",
    description: "A page of a campaign's contacts in the order given; pass next_after as after.",
    inputSchema: {
      campaign_id: campaignId,
      state: z.string().min(1).optional().describe("pending, dialing, done, failed, cancelled."),
      after: z.number().int().optional(),
      limit: z.number().int().optional().describe("1-1000 (default 100)."),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/campaigns.contacts"));

  server.registerTool("list_campaign_attempts", {
    title: "List campaign attempts",
    description: "A page of a campaign's call attempts (session, outcome); pass next_after as " +
      "after.",
    inputSchema: {
      campaign_id: campaignId,
      contact_index: z.number().int().optional().describe("Only this contact's attempts."),
      after: z.object({ contact_index: z.number().int(), attempt: z.number().int() }).optional(),
      limit: z.number().int().optional().describe("1-1000 (default 100)."),
    },
    annotations: { readOnlyHint: true },
  }, forward("/api/v1/campaigns.attempts"));
}
