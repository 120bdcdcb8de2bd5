// The real API (Hono on Deno.serve) on a loopback port, against a fresh database, with helpers
// to call it the way customers do.
import { createApp } from "../../api/app.ts";
import { startApiService } from "../../api/service.ts";
import { loadSettings, type Settings } from "../../common/settings.ts";
import { setQuiet } from "../../common/log.ts";
import { loadTelephonySettings, type TelephonySettings } from "../../common/telephony_settings.ts";
import type { Database } from "../../db/client.ts";
import { registerNode } from "../../db/nodes.ts";
import { freshDatabase } from "./database.ts";
import type { ApiDeps } from "../../api/context.ts";

export interface TestApi {
  url: string;
  db: Database;
  settings: Settings;
  adminToken: string;
  /** The API process's dependencies (what a SIP redirect server beside it is started with). */
  deps: ApiDeps;
  /** POST a JSON body with an Authorization bearer; returns status, headers and parsed body. */
  post(
    path: string,
    body: unknown,
    auth?: string,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  admin(path: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

export async function readReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch { /* not JSON: keep the text */ }
  return { status: res.status, headers: res.headers, body };
}

export async function startTestApi(
  env: Record<string, string> = {},
  options: {
    db?: Database;
    node?: boolean;
    telephony?: TelephonySettings;
    /** More of startApiService's options (the webhook dispatcher's clock, say). */
    service?: Parameters<typeof startApiService>[2];
  } = {},
): Promise<TestApi> {
  setQuiet(true);
  const db = options.db ?? await freshDatabase();
  const settings = loadSettings({ ADMIN_TOKEN: "adm_test_token_0123456789", ...env });
  const service = await startApiService(db, settings, {
    sweepMs: 200,
    telephony: options.telephony ?? loadTelephonySettings({}),
    ...options.service,
  });
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    createApp(service.deps).fetch,
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  if (options.node !== false) {
    await registerNode(db.sql, {
      node_id: "node-test-1",
      offer_base_url: "http://127.0.0.1:9/worker",
      capacity: 1000,
    });
  }
  const post = async (
    path: string,
    body: unknown,
    auth?: string,
    headers: Record<string, string> = {},
  ) => {
    const h: Record<string, string> = { "content-type": "application/json", ...headers };
    if (auth) h.authorization = `Bearer ${auth}`;
    const res = await fetch(url + path, {
      method: "POST",
      headers: h,
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return readReply(res);
  };
  return {
    url,
    db,
    settings,
    adminToken: service.deps.adminToken,
    deps: service.deps,
    post,
    admin: (path, body = {}) => post(path, body, service.deps.adminToken),
    close: async () => {
      ac.abort();
      await server.finished;
      await service.close();
      if (!options.db) await db.close();
    },
  };
}

export interface Tenant {
  agent_id: string;
  workspace_id: string;
  sk: string;
  pk: string;
  pk_key_id: string;
  sk_key_id: string;
}

export const PAGE_ORIGIN = "http://127.0.0.1:5173";

/** An agent with a secret key and a publishable key allowlisted for PAGE_ORIGIN. */
export async function makeTenant(
  api: TestApi,
  tenant = "acme",
  options: { record_by_default?: boolean; origins?: string[]; brain_url?: string } = {},
): Promise<Tenant> {
  const made = await api.admin("/api/v1/agents.create", {
    tenant,
    name: "Support",
    brain_url: options.brain_url ?? "wss://brain.example.test/voice",
    record_by_default: options.record_by_default ?? false,
  });
  if (made.status !== 200) throw new Error(`agents.create: ${JSON.stringify(made.body)}`);
  const pk = await api.admin("/api/v1/keys.create", {
    agent_id: made.body.agent.agent_id,
    kind: "publishable",
    allowed_origins: options.origins ?? [PAGE_ORIGIN],
  });
  if (pk.status !== 200) throw new Error(`keys.create: ${JSON.stringify(pk.body)}`);
  const keys = await api.admin("/api/v1/keys.list", { agent_id: made.body.agent.agent_id });
  const sk = keys.body.keys.find((k: { kind: string }) => k.kind === "secret");
  return {
    agent_id: made.body.agent.agent_id,
    workspace_id: made.body.agent.workspace_id,
    sk: made.body.session_key,
    pk: pk.body.session_key,
    pk_key_id: pk.body.key.key_id,
    sk_key_id: sk.key_id,
  };
}

/** Rows in the tables a refused request must not touch. */
export async function rowCounts(db: Database) {
  const [row] = await db.sql<
    { sessions: number; usage: number; events: number; active: number }[]
  >`select (select count(*)::int from sessions) as sessions,
           (select count(*)::int from usage) as usage,
           (select count(*)::int from session_events) as events,
           (select coalesce(sum(active_calls), 0)::int from worker_nodes) as active`;
  return row;
}
