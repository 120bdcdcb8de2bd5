// The session's log: wire frames to and from the brain, page messages and worker events, each
// with its time since the session was created (the origin the turns' "At" shares) and its data
// behind a disclosure, a chat frame's JSON text shown parsed; hovering a kind says what it means
// (common/session_event_meanings.ts).
import type { FC } from "hono/jsx";
import type { SessionRecord } from "../../db/session_records.ts";
import { meaningOf } from "../../common/session_event_meanings.ts";
import { readLogData, summary } from "./log_view.ts";
import { SINCE_CREATED, sinceCreated } from "./records.ts";

type Entry = SessionRecord["log"][number];

export const WireLog: FC<{
  log: Entry[];
  from: Date;
  source?: string;
  href: (source?: string) => string;
}> = ({ log, from, source, href }) => {
  const sources = [...new Set(log.map((e) => e.source))];
  const shown = source ? log.filter((e) => e.source === source) : log;
  return (
    <>
      <p class="chips small">
        <a class={source ? "" : "on"} href={href()}>all ({log.length})</a>
        {sources.map((s) => (
          <a class={s === source ? "on" : ""} href={href(s)}>
            {s} ({log.filter((e) => e.source === s).length})
          </a>
        ))}
      </p>
      {shown.length === 0 ? <p class="muted">No log entries.</p> : (
        <table id="log">
          <thead>
            <tr>
              <th class="num" title={SINCE_CREATED}>s since created</th>
              <th>Source</th>
              <th>Kind</th>
              <th>Data</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => {
              const d = readLogData(e.data);
              return (
                <tr data-source={e.source} data-kind={e.kind}>
                  <td class="num small" title={e.at.toISOString()}>
                    {sinceCreated(e.at, from, 3)}
                  </td>
                  <td class="small">{e.source}</td>
                  <td class="mono small" title={meaningOf(e.source, e.kind)}>{e.kind}</td>
                  <td>
                    <details>
                      <summary class="mono small">{summary(d.value)}</summary>
                      {d.parsedJson && <p class="small muted">JSON text shown parsed:</p>}
                      <pre>{JSON.stringify(d.value, null, 2)}</pre>
                    </details>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </>
  );
};
