// The console's page for an agent's bucket and retention (issue 37): what is set (the secret only
// as set or not), recordings still waiting for the bucket with their last error, and a form that
// goes through storage.set's own checks (api/admin/agent_storage.ts).
import { Hono } from "hono";
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { type Agent, getAgent } from "../../db/agents.ts";
import {
  type AgentStorage,
  getStorage,
  pendingUploads,
  type RecordingUpload,
} from "../../db/agent_storage.ts";
import { ApiError } from "../../common/http/errors.ts";
import { setStorage } from "../admin/agent_storage.ts";
import type { ApiDeps } from "../context.ts";
import { checked, field, type Form } from "./forms.ts";
import { ErrorNotice, Layout } from "./layout.tsx";

const StoragePage: FC<{
  agent: Agent;
  storage?: AgentStorage;
  pending: RecordingUpload[];
  error?: string;
  saved?: boolean;
}> = ({ agent, storage: s, pending, error, saved }) => (
  <Layout title={`${agent.name}: storage`}>
    <p class="small">
      <a href={`/console/agents/${agent.agent_id}`}>{agent.name}</a> / storage
    </p>
    <h1>Recordings and retention</h1>
    <dl class="facts">
      <dt>Bucket</dt>
      <dd class="mono">{s?.bucket ?? "none (recordings stay on the worker)"}</dd>
      <dt>Secret access key</dt>
      <dd>{s?.secret_access_key_set ? "set" : "not set"}</dd>
      <dt>Retention</dt>
      <dd>{s?.retention_days ? `${s.retention_days} days` : "kept"}</dd>
    </dl>
    <h2>Waiting for the bucket</h2>
    {pending.length
      ? (
        <table>
          <thead>
            <tr>
              <th>Session</th>
              <th>Attempts</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {pending.map((u) => (
              <tr>
                <td class="mono">
                  <a href={`/console/sessions/${u.session_id}`}>{u.session_id}</a>
                </td>
                <td>{u.attempts}</td>
                <td>{u.last_error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )
      : <p>None.</p>}
    <h2>Change</h2>
    <ErrorNotice message={error} />
    {saved && <p class="notice">Saved.</p>}
    <form class="stack" method="post" action={`/console/storage/${agent.agent_id}`}>
      {(["bucket", "prefix", "region", "endpoint", "access_key_id"] as const).map((name) => (
        <label>
          {name}
          <input type="text" name={name} value={s?.[name] ?? ""} />
        </label>
      ))}
      <label>
        secret_access_key (empty keeps the one set)
        <input type="password" name="secret_access_key" autocomplete="off" />
      </label>
      <label>
        retention_days (0 keeps)
        <input type="number" name="retention_days" min="0" value={String(s?.retention_days ?? 0)} />
      </label>
      <label class="check">
        <input type="checkbox" name="remove_bucket" value="on" /> No bucket
      </label>
      <div>
        <button type="submit">Save</button>
      </div>
    </form>
  </Layout>
);

export function storageConsole(deps: ApiDeps): Hono {
  const ui = new Hono();
  const render = async (c: Context, agent: Agent, extra: { error?: string; saved?: boolean }) =>
    c.html(
      "<!doctype html>" + String(
        await (
          <StoragePage
            agent={agent}
            storage={await getStorage(deps.sql, agent.agent_id)}
            pending={await pendingUploads(deps.sql, agent.agent_id)}
            {...extra}
          />
        ),
      ),
      extra.error ? 400 : 200,
    );
  ui.get("/:agent_id", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    if (!agent) return c.text("No such agent.", 404);
    return render(c, agent, { saved: c.req.query("saved") === "1" });
  });
  ui.post("/:agent_id", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    if (!agent) return c.text("No such agent.", 404);
    const f = (await c.req.parseBody({ all: true })) as Form;
    const body: Record<string, unknown> = {};
    for (const name of ["bucket", "prefix", "region", "endpoint", "access_key_id"]) {
      const v = field(f, name);
      if (v || name === "prefix" || name === "endpoint") body[name] = v;
    }
    if (!body.bucket) delete body.bucket;
    const secret = field(f, "secret_access_key");
    if (secret) body.secret_access_key = secret;
    const days = field(f, "retention_days");
    if (days) body.retention_days = Number(days);
    if (checked(f, "remove_bucket")) body.remove_bucket = true;
    try {
      await setStorage(deps, agent.agent_id, body);
    } catch (err) {
      if (err instanceof ApiError) return render(c, agent, { error: err.message });
      throw err;
    }
    return c.redirect(`/console/storage/${agent.agent_id}?saved=1`, 303);
  });
  return ui;
}
