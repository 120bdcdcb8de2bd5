// Per-turn timeline: each step's latency as a number and as a bar on a shared scale.
// Rendered once on the server: no `key` props (the precompiled JSX prints them as attributes).
// deno-lint-ignore-file jsx-key
import type { FC } from "hono/jsx";
import {
  formatMs,
  LATENCIES,
  segments,
  SINCE_CREATED,
  sinceCreated,
  type TurnView,
  TYPED_WAIT,
} from "./records.ts";

/** A turn's figure in a column; a typed turn's own wait stands in the end-of-speech one. */
const Figure: FC<{ turn: TurnView; step: typeof LATENCIES[number][0] }> = ({ turn, step }) => {
  const typed = turn.latency_ms[TYPED_WAIT];
  if (step === "end_to_first_audio" && typed !== undefined && turn.latency_ms[step] === undefined) {
    return (
      <td
        class="num"
        data-latency={TYPED_WAIT}
        title="typed text reached the worker → first audio sent"
      >
        {formatMs(typed)} <span class="muted small">from typed text</span>
      </td>
    );
  }
  return <td class="num" data-latency={step}>{formatMs(turn.latency_ms[step])}</td>;
};

export const Timeline: FC<{ turns: TurnView[]; created: Date | null }> = (
  { turns, created },
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
        first bot audio. A speculative turn went to the brain at the caller's pause, so its brain
        and synthesis ran inside end of turn: its wait is end of turn then
        <span class="seg-release"></span>release (the held reply sent). Recognition runs inside end
        of turn or to brain. A typed turn has no speech: its wait counts from its text reaching the
        worker. The last column is the same wait as the page or caller simulator measured it from
        the audio it sent and received. "At" counts seconds since the session was created, as the
        log below does.
      </p>
      <table id="timeline">
        <thead>
          <tr>
            <th>Turn</th>
            <th title={SINCE_CREATED}>At (s since created)</th>
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
              <td class="small at">{sinceCreated(t.started_at, created)}</td>
              {LATENCIES.map(([key]) => <Figure turn={t} step={key} />)}
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
