// One agent: its settings (brain URL, recording default, echo cancellation), its keys, new keys and revocation.
import type { FC } from "hono/jsx";
import { SENSITIVITY_LEVELS } from "../../common/turn_sensitivity.ts";
import type { Agent } from "../../db/agents.ts";
import type { ApiKey } from "../../db/keys.ts";
import { ErrorNotice, Layout, ShownOnce, Time } from "./layout.tsx";
import { EchoCancellationSelect } from "./agents.tsx";

export interface KeyForm {
  kind?: string;
  origins?: string;
}

const KeysTable: FC<{ agent: Agent; keys: ApiKey[] }> = ({ agent, keys }) =>
  keys.length === 0 ? <p class="muted">No keys.</p> : (
    <table>
      <thead>
        <tr>
          <th>Key id</th>
          <th>Kind</th>
          <th>Prefix</th>
          <th>Allowed origins</th>
          <th>Created</th>
          <th>State</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((k) => (
          <tr id={`key-${k.key_id}`}>
            <td class="mono small">{k.key_id}</td>
            <td>{k.kind}</td>
            <td class="mono">{k.prefix}…</td>
            <td class="mono small">
              {k.allowed_origins.length
                ? k.allowed_origins.join(" ")
                : <span class="muted">—</span>}
            </td>
            <td>
              <Time at={k.created_at} />
            </td>
            <td>
              {k.revoked_at
                ? (
                  <span>
                    <span class="badge s-revoked">revoked</span> <Time at={k.revoked_at} />
                  </span>
                )
                : (
                  <form
                    class="inline"
                    method="post"
                    action={`/console/agents/${agent.agent_id}/keys/${k.key_id}/revoke`}
                    data-confirm={`Revoke ${k.prefix}…? Calls can no longer start with it.`}
                  >
                    <span class="badge s-ended">active</span>{" "}
                    <button class="danger" type="submit">Revoke</button>
                  </form>
                )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

export const AgentPage: FC<{
  agent: Agent;
  keys: ApiKey[];
  created?: { key: ApiKey; sessionKey: string };
  keyForm?: KeyForm;
  keyError?: string;
  settingsError?: string;
  saved?: boolean;
}> = ({ agent, keys, created, keyForm = {}, keyError, settingsError, saved }) => (
  <Layout title={agent.name}>
    <p class="small">
      <a href={`/console/agents?tenant=${encodeURIComponent(agent.tenant)}`}>
        {agent.tenant}
      </a>{" "}
      / agent
    </p>
    <h1>{agent.name}</h1>
    {created && (
      <ShownOnce
        id="new-key"
        label={`New ${created.key.kind} key ${created.key.key_id}`}
        value={created.sessionKey}
      />
    )}
    <dl class="facts">
      <dt>Agent id</dt>
      <dd class="mono">{agent.agent_id}</dd>
      <dt>Created</dt>
      <dd>
        <Time at={agent.created_at} />
      </dd>
      <dt>Sessions</dt>
      <dd>
        <a href={`/console/sessions?agent_id=${encodeURIComponent(agent.agent_id)}`}>
          list this agent's sessions
        </a>
      </dd>
      <dt>Redaction</dt>
      <dd>
        <a href={`/console/redaction/${agent.agent_id}`}>what its records are redacted of</a>
      </dd>
      <dt>Recordings</dt>
      <dd>
        <a href={`/console/storage/${agent.agent_id}`}>bucket and retention</a>
      </dd>
    </dl>

    <h2>Settings</h2>
    <ErrorNotice message={settingsError} />
    {saved && <p class="notice">Saved.</p>}
    <form class="stack" method="post" action={`/console/agents/${agent.agent_id}`}>
      <label>
        Name
        <input type="text" name="name" value={agent.name} required />
      </label>
      <label>
        Brain URL
        <input type="text" name="brain_url" value={agent.brain_url} required />
      </label>
      <label class="check">
        <input
          type="checkbox"
          name="record_by_default"
          value="on"
          checked={agent.record_by_default}
        />
        Record calls by default
      </label>
      <LevelSelect
        name="interruption_sensitivity"
        label="Interruption sensitivity (how readily the bot stops when the caller speaks over it)"
        value={agent.interruption_sensitivity}
      />
      <LevelSelect
        name="turn_patience"
        label="Turn patience (how long it waits at the caller's pauses)"
        value={agent.turn_patience}
      />
      <EchoCancellationSelect value={agent.echo_cancellation} />
      <div>
        <button type="submit">Save</button>
      </div>
    </form>

    <h2>Keys</h2>
    <KeysTable agent={agent} keys={keys} />
    <h2 id="new-key-form">New key</h2>
    <ErrorNotice message={keyError} />
    <form class="stack" method="post" action={`/console/agents/${agent.agent_id}/keys`}>
      <label>
        Kind
        <select name="kind">
          <option value="publishable" selected={keyForm.kind !== "secret"}>
            publishable (pk_, for browsers, origin allowlist)
          </option>
          <option value="secret" selected={keyForm.kind === "secret"}>
            secret (sk_, server-side only)
          </option>
        </select>
      </label>
      <label>
        Allowed origins (publishable keys; one per line, scheme://host[:port])
        <textarea name="origins" rows={3} placeholder="https://app.example.com">
          {keyForm.origins ?? ""}
        </textarea>
      </label>
      <div>
        <button type="submit">Create key</button>
      </div>
    </form>
  </Layout>
);

/** low, medium or high (common/turn_sensitivity.ts; docs/turn-taking.md has the curves). */
const LevelSelect: FC<{ name: string; label: string; value: string }> = (
  { name, label, value },
) => (
  <label>
    {label}
    <select name={name}>
      {SENSITIVITY_LEVELS.map((level) => (
        <option value={level} selected={level === value}>{level}</option>
      ))}
    </select>
  </label>
);
