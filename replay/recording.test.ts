import assert from "node:assert/strict";
import { type LogEntry, readRecording } from "./recording.ts";
import { diffExchanges, formatDiff } from "./diff.ts";
import { loggedFrame as e } from "../tests/helpers/logged_frame.ts";

const started: LogEntry = {
  at: "2026-01-01T00:00:00.000Z",
  source: "worker",
  kind: "call_started",
  data: { about: null },
};

Deno.test("a recording groups the brain's answers by the caller event they followed", () => {
  const rec = readRecording("ses_1", [
    started,
    e("to_brain", "session_start", { session_id: "ses_1", agent_id: "ag", init_json: "{}" }),
    e("from_brain", "greeting", { text: "Hello" }),
    e("to_brain", "heard", { unit_id: "greeting", turn_id: "greeting", text: "Hello" }),
    e("to_brain", "user_turn", { turn_id: "t1", text: "tell me a story" }),
    e("from_brain", "action", { type: "transcript", json: '{"text":"tell me a story"}' }),
    e("from_brain", "speech_unit", { turn_id: "t1", unit_id: "u1", text: "Once" }),
    e("from_brain", "speech_unit", { turn_id: "t1", unit_id: "u2", text: "upon" }),
    e("to_brain", "cancel", { turn_id: "t1" }),
    // Sent before the cancel reached the brain: still turn t1's.
    e("from_brain", "speech_unit", { turn_id: "t1", unit_id: "u3", text: "a time" }),
    e("to_brain", "user_turn", { turn_id: "t2", text: "bye" }),
    e("from_brain", "speech_unit", { turn_id: "t2", unit_id: "u4", text: "Bye", last: true }),
    e("from_brain", "speech_unit", { turn_id: "t2", unit_id: "u5", text: "", last: true }),
    e("from_brain", "config", {
      tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_UNSPECIFIED" },
      stt: null,
    }),
    e("from_brain", "end_session", { reason: "caller said goodbye" }),
    e("to_brain", "end", { reason: "brain_ended" }),
  ]);
  assert.deepEqual(rec.start, { session_id: "ses_1", agent_id: "ag", init_json: "{}" });
  assert.deepEqual(rec.events.map((x) => x.kind), ["user_turn", "cancel", "user_turn"]);
  assert.equal(rec.events[1].kind === "cancel" && rec.events[1].afterUnits, 2);
  assert.equal(rec.endReason, "brain_ended");
  assert.deepEqual(rec.answers, [
    [{ kind: "unit", turn_id: "greeting", text: "Hello" }],
    [
      { kind: "action", type: "transcript", data: { text: "tell me a story" } },
      { kind: "unit", turn_id: "t1", text: "Once" },
      { kind: "unit", turn_id: "t1", text: "upon" },
      { kind: "unit", turn_id: "t1", text: "a time" },
    ],
    [],
    [
      { kind: "unit", turn_id: "t2", text: "Bye" },
      { kind: "config", config: { tts: { voice: "VOICE_ANANYA" } } },
      { kind: "end", reason: "caller said goodbye" },
    ],
  ]);
});

Deno.test("a session that never reached its brain has nothing to replay", () => {
  assert.throws(() => readRecording("ses_2", [started]), /no session_start/);
});

Deno.test("exchanges after the brain ended early are reported as not replayed", () => {
  const recorded = [[{ kind: "unit" as const, turn_id: "greeting", text: "Hi" }], [], []];
  const events = [
    { kind: "user_turn" as const, body: { turn_id: "t1", text: "a" } },
    { kind: "user_turn" as const, body: { turn_id: "t2", text: "b" } },
  ];
  const replayed = [[{ kind: "unit" as const, turn_id: "greeting", text: "Hi" }], [
    { kind: "end" as const, reason: "bored" },
  ]];
  const lines = formatDiff(diffExchanges(events, recorded, replayed, 1), 3);
  assert.deepEqual(lines, [
    'after turn t1: "a":',
    "  end     recorded: (none)",
    '          replayed: "bored"',
    'after turn t2: "b":',
    "  not replayed: the brain had ended the session",
    "2 of 3 exchanges answered differently",
  ]);
});
