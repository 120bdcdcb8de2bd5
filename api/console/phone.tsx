// Phone numbers and SIP trunks: one page with both lists and their forms. A trunk's password is
// typed once and kept only as hashes: the page never shows it, nor anything derived from it.
import type { FC } from "hono/jsx";
import type { Agent } from "../../db/agents.ts";
import type { PhoneNumber } from "../../db/phone_numbers.ts";
import type { Trunk } from "../../db/trunks.ts";
import { ErrorNotice, Layout, Time } from "./layout.tsx";

export interface NumberForm {
  number?: string;
  agent_id?: string;
  trunk_id?: string;
}

export interface TrunkForm {
  name?: string;
  sources?: string;
  auth_username?: string;
  auth_realm?: string;
}

export interface PhonePageProps {
  numbers: PhoneNumber[];
  trunks: Trunk[];
  agents: Agent[];
  numberForm?: NumberForm;
  numberError?: string;
  trunkForm?: TrunkForm;
  trunkError?: string;
  /** A refusal of an action on a listed row (a trunk still in use). */
  rowError?: string;
}

const NumbersTable: FC<{ numbers: PhoneNumber[]; agents: Agent[]; trunks: Trunk[] }> = (
  { numbers, agents, trunks },
) => {
  const agentName = (id: string) => agents.find((a) => a.agent_id === id)?.name ?? id;
  const trunkName = (id: string | null) =>
    id === null ? "none (any caller)" : trunks.find((t) => t.trunk_id === id)?.name ?? id;
  if (numbers.length === 0) return <p class="muted">No phone numbers yet.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Number</th>
          <th>Agent</th>
          <th>Trunk</th>
          <th>Takes calls</th>
          <th>Added</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {numbers.map((n) => (
          <tr id={`number-${n.number}`}>
            <td class="mono">{n.number}</td>
            <td>
              <a href={`/console/agents/${n.agent_id}`}>{agentName(n.agent_id)}</a>
            </td>
            <td>{trunkName(n.trunk_id)}</td>
            <td>{n.enabled ? "yes" : "no"}</td>
            <td>
              <Time at={n.created_at} />
            </td>
            <td class="row">
              <form method="post" action="/console/phone/numbers/enabled">
                <input type="hidden" name="number" value={n.number} />
                <input type="hidden" name="enabled" value={n.enabled ? "off" : "on"} />
                <button class="plain" type="submit">{n.enabled ? "Turn off" : "Turn on"}</button>
              </form>
              <form method="post" action="/console/phone/numbers/delete">
                <input type="hidden" name="number" value={n.number} />
                <button class="danger" type="submit">Delete</button>
              </form>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
};

const TrunksTable: FC<{ trunks: Trunk[] }> = ({ trunks }) =>
  trunks.length === 0 ? <p class="muted">No trunks yet.</p> : (
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Trunk id</th>
          <th>Allowed sources</th>
          <th>Digest</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        {trunks.map((t) => (
          <tr id={`trunk-${t.trunk_id}`}>
            <td>
              <a href={`/console/phone/trunks/${t.trunk_id}`}>{t.name}</a>
            </td>
            <td class="mono small">{t.trunk_id}</td>
            <td class="mono small">{t.allowed_sources.join(", ") || "none"}</td>
            <td class="mono small">
              {t.auth_username ? `${t.auth_username} (realm ${t.auth_realm})` : "none"}
            </td>
            <td>
              <form method="post" action="/console/phone/trunks/delete">
                <input type="hidden" name="trunk_id" value={t.trunk_id} />
                <button class="danger" type="submit">Delete</button>
              </form>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );

export const PhonePage: FC<PhonePageProps> = (p) => (
  <Layout title="Phone numbers">
    <h1>Phone numbers</h1>
    <p>
      A call to a number reaches its agent through the SIP redirect server, which sends the trunk on
      to a worker. A number behind a trunk takes calls only from the trunk's addresses or with its
      digest credentials.
    </p>
    <ErrorNotice message={p.rowError} />
    <NumbersTable numbers={p.numbers} agents={p.agents} trunks={p.trunks} />
    <h2 id="add-number">Add a number</h2>
    <ErrorNotice message={p.numberError} />
    <form class="stack" method="post" action="/console/phone/numbers">
      <label>
        Number (E.164)
        <input
          type="text"
          name="number"
          value={p.numberForm?.number ?? ""}
          placeholder="+14155550100"
          required
        />
      </label>
      <label>
        Agent
        <select name="agent_id" required>
          {p.agents.map((a) => (
            <option value={a.agent_id} selected={a.agent_id === p.numberForm?.agent_id}>
              {a.tenant} / {a.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Trunk
        <select name="trunk_id">
          <option value="">None: any caller that reaches the SIP address</option>
          {p.trunks.map((t) => (
            <option value={t.trunk_id} selected={t.trunk_id === p.numberForm?.trunk_id}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
      <div>
        <button type="submit">Add number</button>
      </div>
    </form>
    <h2 id="trunks">Trunks</h2>
    <TrunksTable trunks={p.trunks} />
    <h2 id="add-trunk">New trunk</h2>
    <ErrorNotice message={p.trunkError} />
    <form class="stack" method="post" action="/console/phone/trunks">
      <label>
        Name
        <input type="text" name="name" value={p.trunkForm?.name ?? ""} required />
      </label>
      <label>
        Allowed sources (IPs or CIDR ranges, one per line)
        <textarea name="sources" rows={3}>{p.trunkForm?.sources ?? ""}</textarea>
      </label>
      <label>
        Digest username
        <input type="text" name="auth_username" value={p.trunkForm?.auth_username ?? ""} />
      </label>
      <label>
        Digest password (12 to 128 characters; kept only as a hash)
        <input type="password" name="auth_password" value="" autocomplete="new-password" />
      </label>
      <label>
        Digest realm
        <input
          type="text"
          name="auth_realm"
          value={p.trunkForm?.auth_realm ?? ""}
          placeholder="voice"
        />
      </label>
      <div>
        <button type="submit">Create trunk</button>
      </div>
    </form>
  </Layout>
);

export const TrunkPage: FC<{ trunk: Trunk; error?: string; saved?: boolean }> = (
  { trunk, error, saved },
) => (
  <Layout title={`Trunk ${trunk.name}`}>
    <h1>Trunk {trunk.name}</h1>
    {saved && <p class="notice" role="status">Saved.</p>}
    <ErrorNotice message={error} />
    <dl class="facts">
      <dt>Trunk id</dt>
      <dd class="mono">{trunk.trunk_id}</dd>
      <dt>Digest</dt>
      <dd class="mono">
        {trunk.auth_username ? `${trunk.auth_username} (realm ${trunk.auth_realm})` : "none"}
      </dd>
      <dt>Calls out</dt>
      <dd class="mono" id="trunk-outbound">
        {trunk.outbound_address
          ? `${trunk.outbound_address} over ${trunk.outbound_transport}, ` +
            (trunk.outbound_credentials ? `as ${trunk.outbound_username}` : "no credentials")
          : "no"}
      </dd>
    </dl>
    <form class="stack" method="post" action={`/console/phone/trunks/${trunk.trunk_id}`}>
      <label>
        Name
        <input type="text" name="name" value={trunk.name} required />
      </label>
      <label>
        Allowed sources (IPs or CIDR ranges, one per line)
        <textarea name="sources" rows={3}>{trunk.allowed_sources.join("\n")}</textarea>
      </label>
      <label>
        Digest username
        <input type="text" name="auth_username" value={trunk.auth_username ?? ""} />
      </label>
      <label>
        New digest password (leave empty to keep the current one; a new username or realm needs it)
        <input type="password" name="auth_password" value="" autocomplete="new-password" />
      </label>
      <label>
        Digest realm
        <input type="text" name="auth_realm" value={trunk.auth_realm ?? ""} placeholder="voice" />
      </label>
      <label class="check">
        <input type="checkbox" name="remove_auth" value="on" />
        Remove the digest credentials
      </label>
      <label>
        Outbound address (host or host:port of the trunk's SIP edge; empty: it places no calls)
        <input type="text" name="outbound_address" value={trunk.outbound_address ?? ""} />
      </label>
      <label>
        Outbound transport
        <select name="outbound_transport">
          <option value="udp" selected={trunk.outbound_transport === "udp"}>udp</option>
          <option value="tcp" selected={trunk.outbound_transport === "tcp"}>tcp</option>
        </select>
      </label>
      <label>
        Outbound username
        <input type="text" name="outbound_username" value={trunk.outbound_username ?? ""} />
      </label>
      <label>
        New outbound password (leave empty to keep it; kept sealed, never shown)
        <input type="password" name="outbound_password" value="" autocomplete="new-password" />
      </label>
      <label class="check">
        <input type="checkbox" name="remove_outbound_credentials" value="on" />
        Remove the outbound credentials
      </label>
      <div>
        <button type="submit">Save trunk</button>
      </div>
    </form>
    <p>
      <a href="/console/phone#trunks">Back to phone numbers</a>
    </p>
  </Layout>
);
