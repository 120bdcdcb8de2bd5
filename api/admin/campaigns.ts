// campaigns.create / list / get / pause / resume / cancel / contacts / attempts (the admin group,
// api/admin/routes.ts). The scheduler that dials them is api/campaigns/scheduler.ts.
import type { Context } from "hono";
import { getAgent } from "../../db/agents.ts";
import { getTrunk } from "../../db/trunks.ts";
import {
  type Campaign,
  campaignProgress,
  type CampaignStatus,
  changeCampaignStatus,
  createCampaign,
  getCampaign,
  listAttempts,
  listCampaigns,
  listContacts,
  workspaceOwnsNumber,
} from "../../db/campaigns.ts";
import { optionalString, readObject, requiredString } from "../body.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { BODY_READ_TIMEOUT_MS } from "../../common/http/json_body.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound } from "./agents.ts";
import { trunkNotFound } from "./trunks.ts";
import {
  CAMPAIGN_BODY_BYTES,
  CREATE_FIELDS,
  readContacts,
  readSettings,
} from "./campaign_input.ts";

export const campaignNotFound = () => new ApiError(404, "campaign_not_found", "No such campaign.");

async function withProgress(deps: ApiDeps, campaigns: Campaign[]) {
  const progress = await campaignProgress(deps.sql, campaigns.map((c) => c.campaign_id));
  return campaigns.map((c) => ({ ...c, progress: progress.get(c.campaign_id)! }));
}

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, CREATE_FIELDS, {
    timeoutMs: BODY_READ_TIMEOUT_MS,
    maxBytes: CAMPAIGN_BODY_BYTES,
  });
  const settings = readSettings(body);
  const contacts = readContacts(body, settings.time_zone);
  const agent = await getAgent(deps.sql, settings.agent_id);
  if (!agent) throw agentNotFound();
  if (!await workspaceOwnsNumber(deps.sql, agent.workspace_id, settings.from)) {
    throw new ApiError(
      403,
      "from_not_owned",
      "The agent's workspace has no such phone number to call from (numbers.create).",
      { field: "from" },
    );
  }
  if (settings.trunk_id && !await getTrunk(deps.sql, settings.trunk_id)) throw trunkNotFound();
  const campaign = await createCampaign(
    deps.sql,
    agent.workspace_id,
    settings,
    contacts,
    new Date(),
  );
  const [shown] = await withProgress(deps, [campaign]);
  return c.json({ campaign: shown });
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["workspace_id", "agent_id", "status"]);
  const campaigns = await listCampaigns(deps.sql, {
    workspace_id: optionalString(body, "workspace_id"),
    agent_id: optionalString(body, "agent_id"),
    status: optionalString(body, "status"),
  });
  return c.json({ campaigns: await withProgress(deps, campaigns) });
}

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["campaign_id"]);
  const campaign = await getCampaign(deps.sql, requiredString(body, "campaign_id"));
  if (!campaign) throw campaignNotFound();
  const [shown] = await withProgress(deps, [campaign]);
  return c.json({ campaign: shown });
}

/** A status change allowed only from some statuses; 409 names the status it is in. */
function transition(from: CampaignStatus[], to: CampaignStatus, verb: string) {
  return async (c: Context, deps: ApiDeps): Promise<Response> => {
    const body = await readObject(c, ["campaign_id"]);
    const id = requiredString(body, "campaign_id");
    const changed = await changeCampaignStatus(deps.sql, id, from, to, new Date());
    if (changed) return c.json({ campaign: (await withProgress(deps, [changed]))[0] });
    const campaign = await getCampaign(deps.sql, id);
    if (!campaign) throw campaignNotFound();
    throw new ApiError(
      409,
      "campaign_state",
      `A ${campaign.status} campaign cannot be ${verb}; it must be ${from.join(" or ")}.`,
      { status: campaign.status },
    );
  };
}

export const pause = transition(["scheduled", "running"], "paused", "paused");
export const resume = transition(["paused"], "running", "resumed");
export const cancel = transition(["scheduled", "running", "paused"], "cancelled", "cancelled");

function pageSize(body: Record<string, unknown>): number {
  const v = body.limit ?? 100;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1000) {
    throw invalidRequest("limit", "limit must be a whole number from 1 to 1000.");
  }
  return v;
}

function optionalIndex(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) {
    throw invalidRequest(field, `${field} must be a contact index (a whole number from 0).`);
  }
  return v;
}

async function existing(deps: ApiDeps, body: Record<string, unknown>): Promise<string> {
  const id = requiredString(body, "campaign_id");
  if (!await getCampaign(deps.sql, id)) throw campaignNotFound();
  return id;
}

/** A page of contacts in request order; `after` is the last index of the page before. */
export async function contacts(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["campaign_id", "after", "limit", "state"]);
  const id = await existing(deps, body);
  const limit = pageSize(body);
  const rows = await listContacts(deps.sql, id, {
    after: optionalIndex(body, "after"),
    limit,
    state: optionalString(body, "state"),
  });
  const next = rows.length === limit ? rows[rows.length - 1].contact_index : null;
  return c.json({ contacts: rows, next_after: next });
}

/** A page of attempts by contact then attempt number, optionally of one contact. */
export async function attempts(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["campaign_id", "contact_index", "after", "limit"]);
  const id = await existing(deps, body);
  const limit = pageSize(body);
  const after = body.after;
  let from: { contact_index: number; attempt: number } | undefined;
  if (after !== undefined && after !== null) {
    const ok = typeof after === "object" && after !== null &&
      Number.isInteger((after as Record<string, unknown>).contact_index) &&
      Number.isInteger((after as Record<string, unknown>).attempt);
    if (!ok) throw invalidRequest("after", "after must be {contact_index, attempt}.");
    from = after as { contact_index: number; attempt: number };
  }
  const rows = await listAttempts(deps.sql, id, {
    contact_index: optionalIndex(body, "contact_index"),
    limit,
    after: from,
  });
  const last = rows[rows.length - 1];
  const next = rows.length === limit
    ? { contact_index: last.contact_index, attempt: last.attempt }
    : null;
  return c.json({ attempts: rows, next_after: next });
}
