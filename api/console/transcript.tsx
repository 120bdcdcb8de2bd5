// The conversation: what the caller said, and the bot's units with the part the caller heard
// marked, the part cut off by a barge-in struck through, and any part never played greyed.
// Rendered once on the server: no `key` props (the precompiled JSX prints them as attributes).
// deno-lint-ignore-file jsx-key
import type { FC } from "hono/jsx";
import type { TurnView, UnitView } from "./records.ts";

export const Unit: FC<{ unit: UnitView }> = ({ unit }) => (
  <span class="unit" data-unit={unit.unit_id}>
    {unit.heard && <mark class="heard">{unit.heard}</mark>}
    {unit.rest && (unit.cut_off
      ? <s class="cut" title="cut off: the caller did not hear this">{unit.rest}</s>
      : <span class="unplayed" title="not played">{unit.rest}</span>)}
    {" "}
  </span>
);

export const Transcript: FC<{ turns: TurnView[] }> = ({ turns }) => (
  <div id="transcript">
    {turns.map((t) => (
      <div class="turn" data-turn={t.turn_id}>
        {t.user_text !== null && (
          <p class="said caller">
            <span class="who">Caller</span>
            {t.user_text}
          </p>
        )}
        {t.trigger === "idle" && (
          <p class="said muted">
            <span class="who">—</span>(caller silent)
          </p>
        )}
        {t.units.length > 0 && (
          <p class="said bot">
            <span class="who">Bot</span>
            {t.units.map((u) => <Unit unit={u} />)}
            {t.interrupted && <span class="badge s-failed small">interrupted</span>}
          </p>
        )}
      </div>
    ))}
    <p class="small muted">
      <mark class="heard">heard</mark> <s class="cut">cut off</s>{" "}
      <span class="unplayed">not played</span>
    </p>
  </div>
);
