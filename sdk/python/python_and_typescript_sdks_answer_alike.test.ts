// The two SDKs are one protocol: the Python example brain (its own process) and the TypeScript one
// get the same ServiceFrames from the same fake worker and send the same BrainFrames back, frame
// for frame (kinds, seq, unit ids, last flags, texts, actions, the end), but for the greeting's
// wording and the pong's clock; with speculative turns on, too (a turn cancelled, one confirmed).
import { assertEquals } from "../../tests/helpers/assert.ts";
import { startPythonBrain } from "../../tests/helpers/python_brain.ts";
import { testOnNewestReleases } from "../../tests/helpers/python_releases.ts";
import { type BrainFrame, TestWorker } from "../brain/test_worker.ts";
import { createExampleBrain } from "../brain/example/brain.ts";

type Unit = { turn_id: string; last: boolean };

async function untilLast(worker: TestWorker, turnId: string): Promise<BrainFrame[]> {
  const frames: BrainFrame[] = [];
  for (;;) {
    const f = await worker.next();
    frames.push(f);
    const unit = f.speech_unit as Unit | undefined;
    if (f.frame === "speech_unit" && unit?.turn_id === turnId && unit.last) return frames;
  }
}

/** One scripted call against the brain at `url`; the frames it sent, made comparable. */
async function script(url: string): Promise<unknown[]> {
  const worker = await TestWorker.dial(url, "ses_same");
  const frames: BrainFrame[] = [];
  worker.start("ses_same", { customer: 7 }, { tts: { voice: "VOICE_ARJUN" } });
  frames.push(await worker.next());
  worker.send("user_turn", { turn_id: "t1", text: "the weather is nice" });
  frames.push(...await untilLast(worker, "t1"));
  worker.send("user_turn", { turn_id: "t1b", text: "order 42", typed: true });
  frames.push(...await untilLast(worker, "t1b"));
  worker.send("user_turn", { turn_id: "t2", text: "tell me a long story" });
  frames.push(...await untilLast(worker, "t2"));
  const ping = { label: "rtvi-ai", type: "client-message", id: "p1", data: { t: "ping", d: 7 } };
  worker.send("client_message", { json: JSON.stringify(ping) });
  frames.push(await worker.next());
  worker.send("user_idle", { idle_ms: 5000, turn_id: "idle1" });
  frames.push(...await untilLast(worker, "idle1"));
  worker.send("heard", { unit_id: "t1.1", turn_id: "t1", text: "You said", cut_off: true });
  worker.send("user_turn", { turn_id: "t3", text: "OK, bye" });
  frames.push(...await untilLast(worker, "t3"));
  worker.send("finalize", { heard: [{ unit_id: "t1.1", turn_id: "t1", text: "You said" }] });
  worker.send("end", { reason: "hangup" });
  await worker.closed; // the brain closes the socket after End
  return comparable(frames);
}

/**
 * A call with speculative turns on: an order the caller goes on from (Cancel: its transcript
 * action, held by the SDK, never goes out, and nothing is recorded), then one confirmed.
 */
async function speculativeScript(url: string): Promise<unknown[]> {
  const worker = await TestWorker.dial(url, "ses_spec");
  const frames: BrainFrame[] = [];
  worker.start("ses_spec", { speculative_turns: true });
  frames.push(...await worker.take(2)); // config (turns.speculative), greeting
  worker.send("user_turn", { turn_id: "t1", text: "order 42", speculative: true });
  frames.push(await worker.next()); // "Placing order 42." (the worker would hold its audio)
  worker.send("cancel", { turn_id: "t1" });
  worker.send("user_turn", { turn_id: "t2", text: "order 42 and a cola", speculative: true });
  frames.push(await worker.next()); // t2's first unit: nothing of t1 came in between
  worker.send("turn_confirmed", { turn_id: "t2" });
  frames.push(...await untilLast(worker, "t2")); // transcript, order_placed, unit, last unit
  worker.send("end", { reason: "hangup" });
  await worker.closed;
  return comparable(frames);
}

function comparable(frames: BrainFrame[]): unknown[] {
  return frames.map(({ timestamp_ms: _, ...f }) => {
    if (f.frame === "greeting") return { ...f, greeting: "(each SDK's own words)" };
    const action = f.action as { type: string; json: string } | undefined;
    if (action?.type === "pong") {
      const { at: _at, ...data } = JSON.parse(action.json);
      return { ...f, action: { type: "pong", data } };
    }
    return f;
  });
}

async function answerAlike(packages?: string): Promise<void> {
  const python = await startPythonBrain(undefined, undefined, packages);
  const typescript = createExampleBrain().serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  try {
    const fromTypescript = await script(typescript.url);
    const fromPython = await script(python.url);
    assertEquals(fromPython, fromTypescript);
    assertEquals(fromPython.length, 24); // greeting, 3 + 5 + 8 + 1 + 2 + 4: every step answered
    const speculativeFromTypescript = await speculativeScript(typescript.url);
    const speculativeFromPython = await speculativeScript(python.url);
    assertEquals(speculativeFromPython, speculativeFromTypescript);
    const kinds = speculativeFromPython.map((f) => {
      const frame = f as { frame: string; action?: { type: string } };
      return frame.action?.type ?? frame.frame;
    });
    assertEquals(kinds, [
      "config",
      "greeting",
      "speech_unit",
      "speech_unit",
      "transcript",
      "order_placed",
      "speech_unit",
      "speech_unit",
    ]);
  } finally {
    await typescript.shutdown();
    await python.stop();
  }
}

Deno.test("the Python and TypeScript example brains answer the same frames alike", async () => {
  await answerAlike();
});

// The Python brain on the newest websockets (its asyncio server) and protobuf whose wheels are on
// disk, against the TypeScript worker's own client.
testOnNewestReleases("the Python example brain answers alike", answerAlike);
