// The session's log: wire frames to and from the brain, page messages and worker events, each
// with its time since the session was created and its data behind a disclosure.
import type { FC } from "hono/jsx";
import type { SessionRecord } from "../../db/session_records.ts";
import { preview } from "./records.ts";

type Entry = SessionRecord["log"][number];

const since = (at: Date, from: Date) => `+${((at.getTime() - from.getTime()) / 1000).toFixed(3)}`;

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
              <th class="num">s</th>
              <th>Source</th>
              <th>Kind</th>
              <th>Data</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => (
              <tr data-source={e.source}>
                <td class="num small" title={e.at.toISOString()}>{since(e.at, from)}</td>
                <td class="small">{e.source}</td>
                <td class="mono small">{e.kind}</td>
                <td>
                  <details>
                    <summary class="mono small">{preview(e.data)}</summary>
                    <pre>{JSON.stringify(e.data, null, 2)}</pre>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
};
