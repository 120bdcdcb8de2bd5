// Per-turn timeline: each step's latency as a number and as a bar on a shared scale.
// Rendered once on the server: no `key` props (the precompiled JSX prints them as attributes).
// deno-lint-ignore-file jsx-key
import type { FC } from "hono/jsx";
import { formatMs, LATENCIES, segments, type TurnView } from "./records.ts";

const offset = (turn: TurnView, callStart: Date | null) =>
  turn.started_at && callStart
    ? `+${((turn.started_at.getTime() - callStart.getTime()) / 1000).toFixed(1)} s`
    : "";

export const Timeline: FC<{ turns: TurnView[]; callStart: Date | null }> = (
  { turns, callStart },
) => {
  const bars = turns.map(segments);
  const longest = Math.max(
    1,
    ...bars.map((b) => b.reduce((end, s) => Math.max(end, s.from + s.ms), 0)),
  );
  return (
    <>
      <p class="legend small muted">
        From the caller's end of speech (greeting: call start):
        <span class="seg-end-of-turn"></span>end of turn
        <span class="seg-to-brain"></span>to brain
        <span class="seg-brain"></span>brain
        <span class="seg-synthesis"></span>synthesis; together the wait until the worker sent the
        first bot audio. Recognition runs inside end of turn or to brain. The last column is the
        same wait as the page or caller simulator measured it from the audio it sent and received.
      </p>
      <table id="timeline">
        <thead>
          <tr>
            <th>Turn</th>
            <th>At</th>
            {LATENCIES.map(([, label, what]) => <th class="num" title={what}>{label}</th>)}
            <th style="width:30%">Steps</th>
          </tr>
        </thead>
        <tbody>
          {turns.map((t, i) => (
            <tr data-turn={t.turn_id}>
              <td>
                <span class="mono">{t.turn_id}</span> <span class="muted small">{t.trigger}</span>
                {t.interrupted && <div class="small badge s-failed">barged in</div>}
              </td>
              <td class="small">{offset(t, callStart)}</td>
              {LATENCIES.map(([key]) => (
                <td class="num" data-latency={key}>{formatMs(t.latency_ms[key])}</td>
              ))}
              <td>
                <div class="bar">
                  {bars[i].map((s) => (
                    <span
                      class={`seg-${s.step.replaceAll(" ", "-")}`}
                      style={`width:${((s.ms / longest) * 100).toFixed(2)}%`}
                      title={`${s.step}: ${Math.round(s.ms)} ms`}
                    >
                    </span>
                  ))}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
};
