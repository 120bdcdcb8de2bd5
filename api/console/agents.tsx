// Agents: the list per workspace (tenant), the create form, and the page that shows the new
// agent's secret key once.
// Rendered once on the server: no `key` props (the precompiled JSX prints them as attributes).
// deno-lint-ignore-file jsx-key
import type { FC } from "hono/jsx";
import type { Agent } from "../../db/agents.ts";
import type { ApiKey } from "../../db/keys.ts";
import { ErrorNotice, Layout, ShownOnce, Time } from "./layout.tsx";
import { ECHO_CANCELLATION, type EchoCancellation } from "../../common/echo_cancellation.ts";

const ECHO_LABELS: Record<EchoCancellation, string> = {
  auto: "auto (on for phone lines, off for web calls)",
  on: "on (every call)",
  off: "off",
};

/** The agent's echo cancellation (docs/echo.md), on the create form and the agent's page. */
export const EchoCancellationSelect: FC<{ value?: string }> = ({ value = "auto" }) => (
  <label>
    Echo cancellation (the bot's voice coming back on the caller's line)
    <select name="echo_cancellation">
      {ECHO_CANCELLATION.map((v) => (
        <option value={v} selected={v === value}>{ECHO_LABELS[v]}</option>
      ))}
    </select>
  </label>
);

export interface AgentForm {
  tenant?: string;
  name?: string;
  brain_url?: string;
  record_by_default?: boolean;
  echo_cancellation?: string;
}

const CreateAgentForm: FC<{ form: AgentForm; tenants: string[]; error?: string }> = (
  { form, tenants, error },
) => (
  <>
    <h2 id="create">New agent</h2>
    <ErrorNotice message={error} />
    <form class="stack" method="post" action="/console/agents">
      <label>
        Workspace (tenant)
        <input type="text" name="tenant" value={form.tenant ?? ""} list="tenants" required />
      </label>
      <datalist id="tenants">
        {tenants.map((t) => <option value={t} />)}
      </datalist>
      <label>
        Name
        <input type="text" name="name" value={form.name ?? ""} required />
      </label>
      <label>
        Brain URL
        <input
          type="text"
          name="brain_url"
          value={form.brain_url ?? ""}
          placeholder="wss://brain.example.com/voice (or echo:)"
          required
        />
      </label>
      <label class="check">
        <input
          type="checkbox"
          name="record_by_default"
          value="on"
          checked={form.record_by_default}
        />
        Record calls by default
      </label>
      <EchoCancellationSelect value={form.echo_cancellation} />
      <div>
        <button type="submit">Create agent</button>
      </div>
    </form>
  </>
);

export const AgentsPage: FC<{
  agents: Agent[];
  tenants: string[];
  tenant?: string;
  form?: AgentForm;
  error?: string;
}> = ({ agents, tenants, tenant, form, error }) => (
  <Layout title="Agents">
    <h1>Agents</h1>
    <form class="row" method="get" action="/console/agents" data-autosubmit>
      <label>
        Workspace
        <select name="tenant">
          <option value="">All workspaces</option>
          {tenants.map((t) => <option value={t} selected={t === tenant}>{t}</option>)}
        </select>
      </label>
      <button class="plain" type="submit">Show</button>
    </form>
    {agents.length === 0
      ? <p class="muted">No agents{tenant ? ` in ${tenant}` : ""} yet.</p>
      : (
        <table>
          <thead>
            <tr>
              <th>Workspace</th>
              <th>Name</th>
              <th>Agent id</th>
              <th>Brain URL</th>
              <th>Records by default</th>
              <th>Echo cancellation</th>
              <th>Created</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {agents.map((a) => (
              <tr>
                <td>{a.tenant}</td>
                <td>
                  <a href={`/console/agents/${a.agent_id}`}>{a.name}</a>
                </td>
                <td class="mono small">{a.agent_id}</td>
                <td class="mono small">{a.brain_url}</td>
                <td>{a.record_by_default ? "yes" : "no"}</td>
                <td>{a.echo_cancellation}</td>
                <td>
                  <Time at={a.created_at} />
                </td>
                <td>
                  <a href={`/console/sessions?agent_id=${encodeURIComponent(a.agent_id)}`}>
                    sessions
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    <CreateAgentForm form={form ?? { tenant }} tenants={tenants} error={error} />
  </Layout>
);

export const AgentCreatedPage: FC<{ agent: Agent; apiKey: ApiKey; sessionKey: string }> = (
  { agent, apiKey, sessionKey },
) => (
  <Layout title={`Agent ${agent.name} created`}>
    <h1>Agent {agent.name} created</h1>
    <ShownOnce id="new-key" label={`Secret key ${apiKey.key_id}`} value={sessionKey} />
    <p>
      Use it server-side (sessions.connect, sessions.get). For browsers, make a publishable key with
      allowed origins on the <a href={`/console/agents/${agent.agent_id}`}>agent's page</a>.
    </p>
    <dl class="facts">
      <dt>Workspace</dt>
      <dd>{agent.tenant}</dd>
      <dt>Agent id</dt>
      <dd class="mono">{agent.agent_id}</dd>
      <dt>Brain URL</dt>
      <dd class="mono">{agent.brain_url}</dd>
      <dt>Records by default</dt>
      <dd>{agent.record_by_default ? "yes" : "no"}</dd>
      <dt>Interruption sensitivity</dt>
      <dd>{agent.interruption_sensitivity}</dd>
      <dt>Turn patience</dt>
      <dd>{agent.turn_patience}</dd>
      <dt>Echo cancellation</dt>
      <dd>{agent.echo_cancellation}</dd>
    </dl>
    <p>
      <a href="/console/agents">Back to agents</a>
    </p>
  </Layout>
);
