import { assertEquals } from "../../tests/helpers/assert.ts";
import { BrainEvents, INTERIM_MIN_MS } from "./brain_events.ts";
import type { CallerEvents } from "./call_config.ts";
import type { TurnRecord } from "./turn_record.ts";

function events(wanted: CallerEvents) {
  const sent: [string, unknown][] = [];
  let clock = 0;
  const e = new BrainEvents((k, b) => sent.push([k, b]), () => wanted, () => clock);
  return { e, sent, tick: (ms: number) => (clock += ms) };
}

const record = (id: string): TurnRecord => ({
  turn_id: id,
  trigger: "speech",
  user_text: "hi",
  started_at: new Date(0).toISOString(),
  marks: {},
  latency_ms: { end_of_turn: 310, to_brain: 2.5, brain: 120, synthesis: 80 },
  units: [],
  interrupted: true,
  engines: { synthesis: [] },
});

Deno.test("a brain that asked for nothing is sent nothing", () => {
  const { e, sent } = events({ speech: false, interim_text: false, turn_metrics: false });
  e.speechStarted(true);
  e.interim("hel");
  e.speechStopped();
  e.turnOver(record("t1"));
  assertEquals(sent, []);
});

Deno.test("speech and turn metrics go as asked, each turn's metrics once", () => {
  const { e, sent } = events({ speech: true, interim_text: false, turn_metrics: true });
  e.speechStarted(true);
  e.speechStopped();
  e.turnOver(record("t1"));
  e.turnOver(record("t1")); // a cut turn's tail playing out
  e.turnOver(undefined);
  assertEquals(sent, [
    ["user_speech", { speaking: true, over_bot: true }],
    ["user_speech", { speaking: false, over_bot: false }],
    ["turn_metrics", {
      turn_id: "t1",
      trigger: "speech",
      latency_ms: { end_of_turn: 310, to_brain: 2.5, brain: 120, synthesis: 80 },
      interrupted: true,
    }],
  ]);
});

Deno.test("interim text goes at most once per window and never twice the same", () => {
  const { e, sent, tick } = events({ speech: false, interim_text: true, turn_metrics: false });
  e.interim("what");
  tick(INTERIM_MIN_MS - 1);
  e.interim("what time"); // too soon: dropped
  tick(1);
  e.interim("what time");
  tick(INTERIM_MIN_MS);
  e.interim("what time"); // the same text: dropped
  tick(INTERIM_MIN_MS);
  e.interim("what time is it");
  assertEquals(sent.map(([, b]) => (b as { text: string }).text), [
    "what",
    "what time",
    "what time is it",
  ]);
});
