// Reading turn records defensively and laying out their steps.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { decodeSessionCursor, encodeSessionCursor } from "../../db/session_records.ts";
import { formatSeconds, readTurns, readUnit, segments } from "./records.ts";

Deno.test("a unit splits into the heard part and the rest", () => {
  assertEquals(readUnit({ unit_id: "u", text: "One two.", heard: "One", cut_off: true }, 0), {
    unit_id: "u",
    text: "One two.",
    heard: "One",
    rest: " two.",
    cut_off: true,
  });
  // No `heard`: all heard unless cut off; a `heard` that is not a prefix leaves no rest.
  assertEquals(readUnit({ text: "Hi" }, 2)?.heard, "Hi");
  assertEquals(readUnit({ text: "Hi", cut_off: true }, 0)?.rest, "Hi");
  assertEquals(readUnit({ text: "Hi", heard: "Bye" }, 0)?.rest, "");
  assertEquals(readUnit("Hi", 0), undefined);
});

Deno.test("turns with missing or odd fields read as empty, never throw", () => {
  assertEquals(readTurns(null), []);
  assertEquals(readTurns({ turns: [] }), []);
  const [t] = readTurns([1, { marks: { first_unit: "5", first_audio: 80 }, started_at: "x" }]);
  assertEquals(t.turn_id, "#2");
  assertEquals(t.marks, { first_audio: 80 });
  assertEquals(t.started_at, null);
  assertEquals(t.units, []);
});

Deno.test("steps run from end of speech through each mark that happened", () => {
  const [t] = readTurns([{
    marks: {
      speech_ended: 1000,
      final_text: 1180,
      end_of_turn: 1200,
      user_turn_sent: 1250,
      first_unit: 1600,
    },
  }]);
  assertEquals(segments(t), [
    { step: "end of turn", from: 0, ms: 200 },
    { step: "to brain", from: 200, ms: 50 },
    { step: "brain", from: 250, ms: 350 },
  ]);
  const [greeting] = readTurns([{ marks: { first_unit: 140, first_audio: 230 } }]);
  assertEquals(segments(greeting).map((s) => [s.step, s.ms]), [["brain", 140], [
    "synthesis",
    90,
  ]]);
});

Deno.test("a speculative turn's steps are end of turn then release, with its release figure", () => {
  // As the worker records one (media/call/turn_record.ts SPECULATIVE_STEPS): sent at the pause,
  // its reply made inside the window, released when the window closed.
  const [t] = readTurns([{
    speculative: true,
    marks: {
      speech_ended: 1000,
      final_text: 1120,
      user_turn_sent: 1130,
      first_unit: 1170,
      end_of_turn: 1450,
      first_audio: 1456,
    },
    latency_ms: { end_of_turn: 450, release: 6, brain: 40, end_to_first_audio: 456 },
  }]);
  assertEquals(t.speculative, true);
  assertEquals(t.latency_ms.release, 6);
  assertEquals(segments(t), [
    { step: "end of turn", from: 0, ms: 450 },
    { step: "release", from: 450, ms: 6 },
  ]);
  // A plain turn with the same marks keeps the four steps.
  const [plain] = readTurns([{ marks: { speech_ended: 0, end_of_turn: 200, first_audio: 500 } }]);
  assertEquals(plain.speculative, false);
  assertEquals(segments(plain).map((s) => s.step), ["end of turn", "synthesis"]);
});

Deno.test("cursors round-trip and bad ones read as the first page", () => {
  const at = new Date("2025-01-02T03:04:05.678Z");
  assertEquals(
    decodeSessionCursor(encodeSessionCursor({ timings: { created_at: at }, session_id: "ses_x" })),
    {
      created_at: at,
      session_id: "ses_x",
    },
  );
  assertEquals(decodeSessionCursor("!!"), undefined);
  assertEquals(decodeSessionCursor(btoa("[1]")), undefined);
});

Deno.test("durations read in seconds, then minutes", () => {
  assertEquals(formatSeconds(24), "24.0 s");
  assertEquals(formatSeconds(125.4), "2 min 05 s");
  assertEquals(formatSeconds(undefined), "—");
});
