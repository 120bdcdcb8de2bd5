// `deno task replay` finishes a call as a live one finishes: when the brain ends the session, its
// last unit is reported heard, then Finalize (everything heard) and End come, and only then does
// the socket close, so the brain's onSessionEnd sees the service's reason, not "disconnected".
// And a replay is marked as one (SessionStart.replay) under its own session id.
import { assert, assertEquals } from "./helpers/assert.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import type { HeardText, SessionEndInfo } from "../sdk/brain/mod.ts";
import { readRecording } from "../replay/recording.ts";
import { replay } from "../replay/replay.ts";
import { loggedFrame as entry } from "./helpers/logged_frame.ts";

// A recorded call to the example brain: greeting, one turn, then "goodbye" and the brain's end.
const recording = readRecording("ses_rec1", [
  entry("to_brain", "session_start", { session_id: "ses_rec1", agent_id: "ag_1", init_json: "{}" }),
  entry("from_brain", "greeting", { text: "Hello! I am the example brain." }),
  entry("to_brain", "user_turn", { turn_id: "t1", text: "hello there" }),
  entry("from_brain", "speech_unit", { turn_id: "t1", unit_id: "t1.1", text: "You said: hello" }),
  entry("to_brain", "user_turn", { turn_id: "t2", text: "goodbye" }),
  entry("from_brain", "speech_unit", { turn_id: "t2", unit_id: "t2.1", text: "Goodbye!" }),
  entry("from_brain", "end_session", { reason: "caller said goodbye" }),
  entry("to_brain", "finalize", { heard: [] }),
  entry("to_brain", "end", { reason: "brain_ended" }),
]);

Deno.test("a replayed call the brain ends gets every unit heard, then Finalize and End", async () => {
  const heardLive: HeardText[] = [];
  let ended: SessionEndInfo | null = null;
  let endedAt = 0;
  const example = createExampleBrain();
  const brain = createBrain({
    onSessionStart: (s) => example.handlers.onSessionStart?.(s),
    onTurn: (turn, s) => example.handlers.onTurn(turn, s),
    onHeard: (h) => void heardLive.push(h),
    onSessionEnd: (_s, end) => {
      ended = end;
      endedAt = performance.now();
    },
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  try {
    const result = await replay(recording, { brainUrl: brain.url, settleMs: 300 });
    const returnedAt = performance.now();
    assertEquals(result.problem, null);
    assertEquals(result.sent, 2);
    // The brain's session end ran before the replay returned, with the worker's reason.
    assert(
      ended !== null && endedAt <= returnedAt,
      "onSessionEnd had not run when replay returned",
    );
    const end = ended as SessionEndInfo;
    assertEquals(end.reason, "brain_ended");
    const texts = end.heard.map((h) => h.text);
    assertEquals(texts, [
      "Hello! I am the example brain. Say something and I will repeat it.",
      "You said: hello there",
      "Goodbye! Thanks for calling.",
    ]);
    assertEquals(heardLive.map((h) => h.text), texts);
  } finally {
    await brain.shutdown();
  }
});

Deno.test("a replay is marked as one and has its own session id naming the recorded one", async () => {
  let seen: { id: string; replay: unknown } | null = null;
  const brain = createBrain({
    onSessionStart: (s) => void (seen = { id: s.id, replay: s.replay }),
    onTurn: () => {},
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  try {
    const result = await replay(recording, { brainUrl: brain.url, settleMs: 100, timeoutMs: 300 });
    assert(/^ses_rec1-replay-[0-9a-f]{8}$/.test(result.sessionId), result.sessionId);
    assertEquals(seen, { id: result.sessionId, replay: { originalSessionId: "ses_rec1" } });
    const again = await replay(recording, { brainUrl: brain.url, settleMs: 100, timeoutMs: 300 });
    assert(again.sessionId !== result.sessionId, "two replays share a session id");
  } finally {
    await brain.shutdown();
  }
});
