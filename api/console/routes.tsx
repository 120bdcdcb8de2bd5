// The operator console at /console: server-rendered pages (Hono JSX) over the same data
// functions the admin routes use. Signed in with the admin token (see auth.ts for the cookie
// and the CSRF defence). Every response is no-store: keys are shown once and must not linger in
// a cache.
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { JSX } from "hono/jsx/jsx-runtime";
import { getAgent, listAgents, updateAgent } from "../../db/agents.ts";
import { createKey, getKey, listKeys, revokeKey } from "../../db/keys.ts";
import type { SessionStatus } from "../../db/sessions.ts";
import {
  decodeSessionCursor,
  encodeSessionCursor,
  getSession,
  listSessions,
} from "../../db/session_records.ts";
import { listNodes } from "../../db/nodes.ts";
import { MAX_BODY_BYTES } from "../../common/http/json_body.ts";
import { ApiError } from "../../common/http/errors.ts";
import { logger } from "../../common/log.ts";
import { isAdminToken } from "../auth/credentials.ts";
import { checkBrainUrl, createAgentWithKey } from "../admin/agents.ts";
import type { ApiDeps } from "../context.ts";
import {
  endConsoleSession,
  requireSignIn,
  safeNext,
  sameOriginPosts,
  signedIn,
  startConsoleSession,
} from "./auth.ts";
import { CONSOLE_JS } from "./client.ts";
import { Layout } from "./layout.tsx";
import { SignInPage } from "./sign_in.tsx";
import { AgentCreatedPage, type AgentForm, AgentsPage } from "./agents.tsx";
import { AgentPage } from "./agent.tsx";
import { type SessionFilter, SessionsPage, STATUSES } from "./sessions.tsx";
import { SessionPage } from "./session.tsx";
import { LanguagesPage } from "./languages.tsx";
import {
  checked,
  echoCancellationField,
  field,
  type Form,
  formLevels,
  parseOrigins,
} from "./forms.ts";
import { fileResponse, resolveRecording } from "./recording.ts";
import { phoneConsole } from "./phone_routes.tsx";
import { storageConsole } from "./storage.tsx";
import { campaignConsole } from "./campaigns.tsx";
import { redactionConsole } from "./redaction.tsx";
import { webhookConsole } from "./webhooks.tsx";

const log = logger("console");

export interface ConsoleOptions {
  /** Where local recordings live; only files inside it are played. Default: settings.recordingsDir. */
  recordingsDir?: string;
}

const SECURITY_HEADERS: Record<string, string> = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; " +
    "media-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // Not no-referrer: under it browsers send `Origin: null` on form posts.
  "Referrer-Policy": "same-origin",
  "X-Content-Type-Options": "nosniff",
};

const PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 200;

async function page(c: Context, el: JSX.Element, status: 200 | 400 | 401 | 404 = 200) {
  return c.html("<!doctype html>" + String(await el), status);
}

const notFound = (c: Context, what: string) =>
  page(
    c,
    <Layout title="Not found">
      <h1>Not found</h1>
      <p>{what}</p>
    </Layout>,
    404,
  );

/** The message of a refusal the admin routes' validators throw, for the form to show. */
function refusal(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  throw err;
}

async function tenantsOf(deps: ApiDeps): Promise<string[]> {
  return [...new Set((await listAgents(deps.sql)).map((a) => a.tenant))].sort();
}

export function consoleApp(deps: ApiDeps, options: ConsoleOptions = {}): Hono {
  const recordingsDir = options.recordingsDir ?? deps.settings.recordingsDir;
  const ui = new Hono();
  ui.use("*", async (c, next) => {
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
  });
  ui.use("*", sameOriginPosts);
  ui.use("*", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text("Too large.", 413) }));
  const form = async (c: Context) => (await c.req.parseBody({ all: true })) as Form;

  // Open routes: the script and sign-in.
  ui.get("/assets/console.js", (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    return c.body(CONSOLE_JS);
  });
  ui.get("/sign-in", (c) => {
    if (signedIn(c, deps.adminToken)) return c.redirect(safeNext(c.req.query("next")), 303);
    return page(
      c,
      <SignInPage next={safeNext(c.req.query("next"))} signedOut={c.req.query("out") === "1"} />,
    );
  });
  ui.post("/sign-in", async (c) => {
    const f = await form(c);
    const next = safeNext(field(f, "next"));
    // The token field is compared, never logged or echoed back.
    if (!isAdminToken(field(f, "token"), deps.adminToken)) {
      log.warn("console sign-in refused");
      return page(c, <SignInPage next={next} error="That is not the admin token." />, 401);
    }
    startConsoleSession(c, deps.adminToken);
    log.info("console sign-in");
    return c.redirect(next, 303);
  });
  ui.post("/sign-out", (c) => {
    endConsoleSession(c);
    return c.redirect("/console/sign-in?out=1", 303);
  });

  ui.use("*", requireSignIn(deps.adminToken));
  ui.get("/", (c) => c.redirect("/console/sessions", 303));
  ui.route("/phone", phoneConsole(deps));
  ui.route("/campaigns", campaignConsole(deps));
  ui.route("/redaction", redactionConsole(deps));
  ui.route("/webhooks", webhookConsole(deps));
  ui.route("/storage", storageConsole(deps));

  // Agents.
  const agentsPage = async (c: Context, tenant?: string, formState?: AgentForm, error?: string) =>
    page(
      c,
      <AgentsPage
        agents={await listAgents(deps.sql, tenant)}
        tenants={await tenantsOf(deps)}
        tenant={tenant}
        form={formState}
        error={error}
      />,
      error ? 400 : 200,
    );
  ui.get("/agents", (c) => agentsPage(c, c.req.query("tenant") || undefined));
  ui.post("/agents", async (c) => {
    const f = await form(c);
    const input: AgentForm = {
      tenant: field(f, "tenant"),
      name: field(f, "name"),
      brain_url: field(f, "brain_url"),
      record_by_default: checked(f, "record_by_default"),
      echo_cancellation: field(f, "echo_cancellation") || undefined,
    };
    if (!input.tenant || !input.name) {
      return agentsPage(c, undefined, input, "Workspace and name are required.");
    }
    const echo = echoCancellationField(input.echo_cancellation);
    if ("error" in echo) return agentsPage(c, undefined, input, echo.error);
    try {
      checkBrainUrl(input.brain_url!);
    } catch (err) {
      return agentsPage(c, undefined, input, refusal(err));
    }
    // As agents.create: the agent and its first secret key together, the key shown only here.
    const { agent, ...created } = await createAgentWithKey(deps, {
      tenant: input.tenant!,
      name: input.name!,
      brain_url: input.brain_url!,
      record_by_default: input.record_by_default,
      echo_cancellation: echo.value,
    });
    log.info("console created agent", { agent_id: agent.agent_id, key_id: created.key.key_id });
    return page(
      c,
      <AgentCreatedPage agent={agent} apiKey={created.key} sessionKey={created.session_key} />,
    );
  });

  ui.get("/agents/:agent_id", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    if (!agent) return notFound(c, "No such agent.");
    return page(
      c,
      <AgentPage
        agent={agent}
        keys={await listKeys(deps.sql, agent.agent_id)}
        saved={c.req.query("saved") === "1"}
      />,
    );
  });
  ui.post("/agents/:agent_id", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    if (!agent) return notFound(c, "No such agent.");
    const f = await form(c);
    let error: string | undefined;
    const name = field(f, "name");
    const brainUrl = field(f, "brain_url");
    const levels = formLevels(f);
    const echo = echoCancellationField(field(f, "echo_cancellation") || undefined);
    if (!name) error = "The name is required.";
    else if (typeof levels === "string") error = levels;
    else if ("error" in echo) error = echo.error;
    else {
      try {
        checkBrainUrl(brainUrl);
      } catch (err) {
        error = refusal(err);
      }
    }
    if (error) {
      const keys = await listKeys(deps.sql, agent.agent_id);
      return page(c, <AgentPage agent={agent} keys={keys} settingsError={error} />, 400);
    }
    // As agents.update: cached key grants carry record_by_default, so drop them here too.
    await updateAgent(deps.sql, agent.agent_id, {
      name,
      brain_url: brainUrl,
      record_by_default: checked(f, "record_by_default"),
      ...(typeof levels === "string" ? {} : levels),
      echo_cancellation: "value" in echo ? echo.value : undefined,
    });
    deps.keys.invalidate(`agent:${agent.agent_id}`);
    return c.redirect(`/console/agents/${agent.agent_id}?saved=1`, 303);
  });

  ui.post("/agents/:agent_id/keys", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    if (!agent) return notFound(c, "No such agent.");
    const f = await form(c);
    const kind = field(f, "kind") === "secret" ? "secret" : "publishable";
    const originsText = field(f, "origins");
    const parsed = parseOrigins(originsText);
    let error = "error" in parsed ? parsed.error : undefined;
    const origins = "origins" in parsed ? parsed.origins : [];
    if (!error && kind === "secret" && origins.length) {
      error = "Only publishable keys have allowed origins.";
    }
    // A publishable key with no origin could start no call (the allowlist fails closed).
    if (!error && kind === "publishable" && !origins.length) {
      error = "A publishable key needs at least one allowed origin.";
    }
    if (error) {
      const keys = await listKeys(deps.sql, agent.agent_id);
      return page(
        c,
        <AgentPage
          agent={agent}
          keys={keys}
          keyForm={{ kind, origins: originsText }}
          keyError={error}
        />,
        400,
      );
    }
    const created = await createKey(deps.sql, deps.hashSecret, {
      agent_id: agent.agent_id,
      workspace_id: agent.workspace_id,
      kind,
      allowed_origins: origins,
    });
    log.info("console created key", { agent_id: agent.agent_id, key_id: created.key.key_id });
    return page(
      c,
      <AgentPage
        agent={agent}
        keys={await listKeys(deps.sql, agent.agent_id)}
        created={{ key: created.key, sessionKey: created.session_key }}
      />,
    );
  });

  ui.post("/agents/:agent_id/keys/:key_id/revoke", async (c) => {
    const agentId = c.req.param("agent_id");
    const key = await getKey(deps.sql, c.req.param("key_id"));
    if (!key || key.agent_id !== agentId) return notFound(c, "No such key for this agent.");
    await revokeKey(deps.sql, key.key_id);
    deps.keys.invalidate(key.key_id); // this process at once; the others through NOTIFY
    log.info("console revoked key", { agent_id: agentId, key_id: key.key_id });
    return c.redirect(`/console/agents/${agentId}#key-${key.key_id}`, 303);
  });

  // Sessions.
  ui.get("/sessions", async (c) => {
    const status = c.req.query("status");
    const limit = Number(c.req.query("limit") ?? PAGE_SIZE);
    const filter: SessionFilter = {
      agent_id: c.req.query("agent_id") || undefined,
      status: STATUSES.includes(status as SessionStatus) ? status as SessionStatus : undefined,
      limit: Number.isInteger(limit) && limit >= 1 && limit <= MAX_PAGE_SIZE ? limit : PAGE_SIZE,
      cursor: c.req.query("cursor") || undefined,
    };
    // One row more than the page tells whether an older page exists.
    const rows = await listSessions(deps.sql, {
      agent_id: filter.agent_id,
      status: filter.status,
      limit: filter.limit + 1,
      cursor: decodeSessionCursor(filter.cursor),
    });
    const sessions = rows.slice(0, filter.limit);
    const nextCursor = rows.length > filter.limit
      ? encodeSessionCursor(sessions.at(-1)!)
      : undefined;
    return page(
      c,
      <SessionsPage
        sessions={sessions}
        agents={await listAgents(deps.sql)}
        filter={filter}
        nextCursor={nextCursor}
      />,
    );
  });

  ui.get("/sessions/:session_id", async (c) => {
    const s = await getSession(deps.sql, c.req.param("session_id"));
    if (!s) return notFound(c, "No such session.");
    const agent = await getAgent(deps.sql, s.agent_id);
    return page(c, <SessionPage s={s} agent={agent} source={c.req.query("source") || undefined} />);
  });

  ui.get("/sessions/:session_id/recording", async (c) => {
    const s = await getSession(deps.sql, c.req.param("session_id"));
    const path = s?.recording.url
      ? await resolveRecording(s.recording.url, recordingsDir)
      : undefined;
    if (!path) return c.text("No recording file for this session.", 404);
    return await fileResponse(path, c.req.header("range"));
  });

  // What the live nodes serve: the capabilities connect checks against, and every node's row.
  ui.get("/languages", async (c) => {
    const caps = await deps.capabilities.get();
    return page(
      c,
      <LanguagesPage
        served={caps.merged}
        liveNodes={caps.nodes.length}
        nodes={await listNodes(deps.sql)}
        now={new Date()}
        staleSeconds={deps.settings.nodeStaleSeconds}
      />,
    );
  });
  return ui;
}

/** Mounts the console under /console. */
export function mountConsole(app: Hono, deps: ApiDeps, options: ConsoleOptions = {}): void {
  app.route("/console", consoleApp(deps, options));
}
