// The sessions list: display name instead of the id when set, status, duration, agent; filters
// by agent and status; cursor paging.
// Rendered once on the server: no `key` props (the precompiled JSX prints them as attributes).
// deno-lint-ignore-file jsx-key
import type { FC } from "hono/jsx";
import type { Agent } from "../../db/agents.ts";
import type { SessionStatus } from "../../db/sessions.ts";
import type { SessionRecord } from "../../db/session_records.ts";
import { Layout, Status, Time } from "./layout.tsx";
import { formatSeconds, readTurns, secondsBetween } from "./records.ts";

export const STATUSES: SessionStatus[] = [
  "created",
  "connecting",
  "active",
  "ended",
  "failed",
  "expired",
];

export type ListedSession = Omit<SessionRecord, "log">;

export interface SessionFilter {
  agent_id?: string;
  status?: SessionStatus;
  limit: number;
  cursor?: string;
}

/** The list URL for these filters (and a cursor). */
export function listUrl(f: SessionFilter, cursor?: string): string {
  const q = new URLSearchParams();
  if (f.agent_id) q.set("agent_id", f.agent_id);
  if (f.status) q.set("status", f.status);
  if (f.limit !== 50) q.set("limit", String(f.limit));
  if (cursor) q.set("cursor", cursor);
  const s = q.toString();
  return `/console/sessions${s ? "?" + s : ""}`;
}

const live = (s: ListedSession) => s.status === "active";

export const SessionRow: FC<{ s: ListedSession; agentName?: string }> = ({ s, agentName }) => (
  <tr>
    <td>
      <a href={`/console/sessions/${s.session_id}`}>{s.display_name || s.session_id}</a>
      {s.display_name && <div class="mono small muted">{s.session_id}</div>}
    </td>
    <td>
      <Status status={s.status} reason={s.end_reason} />
    </td>
    <td class="num">
      {formatSeconds(secondsBetween(s.timings.started_at, s.timings.ended_at, live(s)))}
    </td>
    <td class="num">{readTurns(s.timings.turns).length || ""}</td>
    <td>
      {agentName ?? <span class="mono small">{s.agent_id}</span>}
      <div class="muted small">{s.tenant}</div>
    </td>
    <td>
      <Time at={s.timings.created_at} />
    </td>
    <td>{s.recording.url ? "●" : ""}</td>
  </tr>
);

export const SessionsPage: FC<{
  sessions: ListedSession[];
  agents: Agent[];
  filter: SessionFilter;
  nextCursor?: string;
}> = ({ sessions, agents, filter, nextCursor }) => {
  const names = new Map(agents.map((a) => [a.agent_id, `${a.name}`]));
  return (
    <Layout title="Sessions">
      <h1>Sessions</h1>
      <form class="row" method="get" action="/console/sessions" data-autosubmit>
        <label>
          Agent
          <select name="agent_id">
            <option value="">All agents</option>
            {agents.map((a) => (
              <option value={a.agent_id} selected={a.agent_id === filter.agent_id}>
                {a.tenant} / {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select name="status">
            <option value="">Any status</option>
            {STATUSES.map((s) => <option value={s} selected={s === filter.status}>{s}</option>)}
          </select>
        </label>
        {filter.limit !== 50 && <input type="hidden" name="limit" value={String(filter.limit)} />}
        <button class="plain" type="submit">Filter</button>
      </form>
      {sessions.length === 0
        ? <p class="muted">No sessions{filter.cursor ? " on this page" : ""}.</p>
        : (
          <table id="sessions">
            <thead>
              <tr>
                <th>Session</th>
                <th>Status</th>
                <th class="num">Duration</th>
                <th class="num">Turns</th>
                <th>Agent</th>
                <th>Created</th>
                <th title="recorded">Rec</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => <SessionRow s={s} agentName={names.get(s.agent_id)} />)}
            </tbody>
          </table>
        )}
      <p class="chips">
        {filter.cursor && <a href={listUrl(filter)}>« Newest</a>}
        {nextCursor && <a rel="next" href={listUrl(filter, nextCursor)}>Older »</a>}
      </p>
    </Layout>
  );
};
