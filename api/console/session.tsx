// One session: status and timings, turn timeline, transcript, log, recording, usage, labels.
import type { FC } from "hono/jsx";
import type { Agent } from "../../db/agents.ts";
import type { SessionRecord } from "../../db/session_records.ts";
import { Failure, readFailure } from "./failure.tsx";
import { JsonDetails, Layout, Status, Time } from "./layout.tsx";
import { formatSeconds, readTurns, secondsBetween } from "./records.ts";
import { Timeline } from "./timeline.tsx";
import { Transcript } from "./transcript.tsx";
import { WireLog } from "./wire_log.tsx";

export const recordingPath = (sessionId: string) => `/console/sessions/${sessionId}/recording`;

const Recording: FC<{ s: SessionRecord }> = ({ s }) => {
  const { url, requested, effective } = s.recording;
  const asked = `requested: ${requested === null ? "agent default" : requested ? "yes" : "no"}` +
    `, effective: ${effective ? "yes" : "no"}`;
  if (!url) {
    return (
      <p class="muted">
        {effective ? "No recording stored (yet)." : "Not recorded."} ({asked})
      </p>
    );
  }
  let scheme = "";
  try {
    scheme = new URL(url).protocol;
  } catch { /* shown as text below */ }
  if (scheme === "file:") {
    return (
      <>
        <audio id="recording" controls preload="metadata" src={recordingPath(s.session_id)}>
        </audio>
        <p class="small muted">
          Channel 1 caller, channel 2 bot. <a href={recordingPath(s.session_id)}>Download</a> ·{" "}
          <span class="mono">{url}</span>
        </p>
      </>
    );
  }
  if (scheme === "https:" || scheme === "http:") {
    return (
      <p>
        <a href={url} rel="noreferrer noopener" target="_blank">Open the recording</a>{" "}
        <span class="mono small muted">{url}</span>
      </p>
    );
  }
  return <p class="mono">{url}</p>;
};

export const SessionPage: FC<{
  s: SessionRecord;
  agent?: Agent;
  source?: string;
}> = ({ s, agent, source }) => {
  const t = s.timings;
  const turns = readTurns(t.turns);
  const href = (src?: string) =>
    `/console/sessions/${s.session_id}${src ? `?source=${encodeURIComponent(src)}` : ""}#log`;
  const metadata = Object.entries(s.metadata ?? {});
  const failure = readFailure(s);
  return (
    <Layout title={s.display_name || s.session_id}>
      <p class="small">
        <a href="/console/sessions">Sessions</a> /{" "}
        <a href={`/console/sessions?agent_id=${encodeURIComponent(s.agent_id)}`}>
          {agent ? `${agent.tenant} / ${agent.name}` : s.agent_id}
        </a>
      </p>
      <h1>
        {s.display_name || s.session_id} <Status status={s.status} reason={s.end_reason} />
      </h1>
      {s.brain_end_reason !== null && (
        <p id="brain-end-reason">
          The brain ended the call: <q>{s.brain_end_reason}</q>
        </p>
      )}
      <dl class="facts">
        <dt>Session id</dt>
        <dd class="mono">{s.session_id}</dd>
        <dt>Agent</dt>
        <dd>
          {agent ? <a href={`/console/agents/${agent.agent_id}`}>{agent.name}</a> : s.agent_id}{" "}
          <span class="muted">({s.tenant})</span>
        </dd>
        <dt>Node</dt>
        <dd class="mono">{s.node_id ?? "—"}</dd>
        <dt>Direction</dt>
        <dd>
          {s.direction === "outbound"
            ? `outbound (placed by the service): ${s.dial_state ?? "not dialled"}`
            : "inbound"}
        </dd>
        <dt>Created</dt>
        <dd>
          <Time at={t.created_at} />
        </dd>
        <dt>Connected</dt>
        <dd>
          <Time at={t.connected_at} />{" "}
          <span class="muted small">
            {t.connected_at
              ? `${formatSeconds(secondsBetween(t.created_at, t.connected_at))} after creation`
              : ""}
          </span>
        </dd>
        <dt>Started</dt>
        <dd>
          <Time at={t.started_at} />
        </dd>
        <dt>Ended</dt>
        <dd>
          <Time at={t.ended_at} />
        </dd>
        <dt>Duration</dt>
        <dd id="duration">
          {formatSeconds(secondsBetween(t.started_at, t.ended_at, s.status === "active"))}
        </dd>
      </dl>

      {failure && (
        <>
          <h2>Why it failed</h2>
          <Failure failure={failure} />
        </>
      )}

      <h2>Turns</h2>
      {turns.length === 0
        ? (
          <p class="muted">
            No turns recorded (echo calls, calls that never started, and sessions from before turn
            records have none).
          </p>
        )
        : <Timeline turns={turns} created={t.created_at} />}

      <h2>Transcript</h2>
      {turns.length === 0 ? <p class="muted">No transcript.</p> : <Transcript turns={turns} />}

      <h2>Recording</h2>
      <Recording s={s} />

      <h2>Usage</h2>
      <dl class="facts" id="usage">
        <dt>Call</dt>
        <dd>{formatSeconds(s.usage.call_seconds)}</dd>
        <dt>Recognised audio</dt>
        <dd>{formatSeconds(s.usage.recognised_seconds)}</dd>
        <dt>Synthesized characters</dt>
        <dd>{s.usage.synthesized_characters}</dd>
      </dl>

      <h2>Labels</h2>
      <dl class="facts" id="labels">
        <dt>Display name</dt>
        <dd>{s.display_name ?? <span class="muted">—</span>}</dd>
        {metadata.map(([k, v]) => (
          <>
            <dt class="mono">{k}</dt>
            <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
          </>
        ))}
      </dl>
      <JsonDetails value={s.agent_input} summary="Agent input (passed to the brain)" />

      <h2 id="log">Log</h2>
      <WireLog log={s.log} from={t.created_at} source={source} href={href} />
    </Layout>
  );
};
