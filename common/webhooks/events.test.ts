import { assertEquals } from "../../tests/helpers/assert.ts";
import { sessionEndedData } from "./events.ts";

Deno.test("session.ended carries what the caller heard, what was cut off, and each turn's latencies", () => {
  const turn = {
    turn_id: "t1",
    trigger: "speech",
    user_text: "what are your hours",
    started_at: "2026-12-02T04:00:00.000Z",
    marks: { speech_ended: 900 },
    latency_ms: { end_of_turn: 420, brain: 180, end_to_first_audio: 700 },
    units: [
      { unit_id: "u1", text: "We open at nine.", heard: "We open at nine.", cut_off: false },
      { unit_id: "u2", text: "And close at six.", heard: "And close", cut_off: true },
    ],
    interrupted: true,
    engines: { synthesis: ["espeak-ng"] },
  };
  const data = sessionEndedData({
    status: "ended",
    end_reason: "caller_hung_up",
    brain_end_reason: null,
    turns: [turn, { turn_id: "greeting", trigger: "greeting", user_text: null, units: [] }],
    recognised_seconds: 1.5,
    synthesized_characters: 33,
    by_engine: { "espeak-ng": { synthesized_characters: 33 } },
    recording_url: null,
  });
  assertEquals(data.transcript, [
    {
      turn_id: "t1",
      trigger: "speech",
      caller: "what are your hours",
      bot: [
        { text: "We open at nine.", heard: "We open at nine.", cut_off: false },
        { text: "And close at six.", heard: "And close", cut_off: true },
      ],
      interrupted: true,
      started_at: "2026-12-02T04:00:00.000Z",
      latency_ms: { end_of_turn: 420, brain: 180, end_to_first_audio: 700 },
    },
    {
      turn_id: "greeting",
      trigger: "greeting",
      caller: null,
      bot: [],
      interrupted: false,
      started_at: null,
      latency_ms: {},
    },
  ]);
  assertEquals(data.recording, null);
  assertEquals(data.usage, {
    recognised_seconds: 1.5,
    synthesized_characters: 33,
    by_engine: { "espeak-ng": { synthesized_characters: 33 } },
  });
});
