// A replayed session as the TypeScript SDK shows it: session.replay names the recorded session
// (SessionStart.replay); a real call's is null.
import assert from "node:assert/strict";
import { createBrain, type Session } from "./mod.ts";
import { TestWorker } from "./test_worker.ts";

Deno.test("session.replay names the recorded session on a replay and is null on a call", async () => {
  const sessions: Session[] = [];
  const served = createBrain({
    onSessionStart: (s) => void sessions.push(s),
    onTurn: () => {},
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const replayed = await TestWorker.dial(served.url, "ses_a-replay-0123abcd");
  const live = await TestWorker.dial(served.url, "ses_b");
  try {
    replayed.send("session_start", {
      session_id: "ses_a-replay-0123abcd",
      agent_id: "agt",
      replay: { original_session_id: "ses_a" },
    });
    live.start("ses_b");
    await Promise.all([replayed.next(), live.next()]); // the greetings
    const byId = Object.fromEntries(sessions.map((s) => [s.id, s]));
    assert.deepEqual(byId["ses_a-replay-0123abcd"].replay, { originalSessionId: "ses_a" });
    assert.equal(byId.ses_b.replay, null);
  } finally {
    await replayed.close();
    await live.close();
    await served.shutdown();
  }
});
