// The demo `deno task run` sets up on every start, through the admin routes like any operator:
// workspace "demo", the agent "Demo agent" pointed at the example brain, and one publishable key
// for the demo page's origins. Keys are stored only as hashes, so the service cannot give a key
// back: a caller that kept the raw key (`deno task run`, in its data directory) passes it with
// what it verified to, and it is kept if it still fits (this agent, publishable, the same
// origins); otherwise a new one is made. Other demo keys are revoked: exactly one works at a time.
import type { AdminCall } from "../api/mcp/tools.ts";
import type { KeyGrant } from "../db/keys.ts";

export const DEMO_TENANT = "demo";
export const DEMO_AGENT_NAME = "Demo agent";

export interface Demo {
  agentId: string;
  publishableKey: string;
}

/** A raw key the caller kept, with the grant it resolves to now (unknown or revoked: none). */
export interface KeptKey {
  sessionKey: string;
  grant: Pick<KeyGrant, "key_id" | "agent_id" | "kind" | "allowed_origins">;
}

function sameOrigins(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().join(" ") === [...b].sort().join(" ");
}

async function ok(call: AdminCall, path: string, body: unknown) {
  const r = await call(path, body);
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
  // deno-lint-ignore no-explicit-any
  return r.body as any;
}

export async function ensureDemo(
  call: AdminCall,
  brainUrl: string,
  origins: string[],
  kept?: KeptKey,
): Promise<Demo> {
  const { agents } = await ok(call, "/api/v1/agents.list", { tenant: DEMO_TENANT });
  let agent = agents.find((a: { name: string }) => a.name === DEMO_AGENT_NAME);
  if (!agent) {
    ({ agent } = await ok(call, "/api/v1/agents.create", {
      tenant: DEMO_TENANT,
      name: DEMO_AGENT_NAME,
      brain_url: brainUrl,
      record_by_default: true,
    }));
  } else if (agent.brain_url !== brainUrl) {
    ({ agent } = await ok(call, "/api/v1/agents.update", {
      agent_id: agent.agent_id,
      brain_url: brainUrl,
    }));
  }
  const keep = kept && kept.grant.agent_id === agent.agent_id &&
      kept.grant.kind === "publishable" && sameOrigins(kept.grant.allowed_origins, origins)
    ? kept
    : undefined;
  const { keys } = await ok(call, "/api/v1/keys.list", { agent_id: agent.agent_id });
  for (const k of keys) {
    if (k.kind === "publishable" && !k.revoked_at && k.key_id !== keep?.grant.key_id) {
      await ok(call, "/api/v1/keys.revoke", { key_id: k.key_id });
    }
  }
  if (keep) return { agentId: agent.agent_id, publishableKey: keep.sessionKey };
  const made = await ok(call, "/api/v1/keys.create", {
    agent_id: agent.agent_id,
    kind: "publishable",
    allowed_origins: origins,
  });
  return { agentId: agent.agent_id as string, publishableKey: made.session_key as string };
}
