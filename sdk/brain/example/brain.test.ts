// The example brain over a real socket: what a new user sees when they point an agent at it.
import assert from "node:assert/strict";
import { TestWorker } from "../test_worker.ts";
import { createExampleBrain } from "./brain.ts";

async function call(run: (worker: TestWorker) => Promise<void>): Promise<void> {
  const served = createExampleBrain().serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_ex");
  try {
    worker.start("ses_ex");
    const greeting = await worker.next();
    assert.match(String((greeting.greeting as { text: string }).text), /example brain/);
    await run(worker);
  } finally {
    await worker.close();
    await served.shutdown();
  }
}

type Unit = { text: string; last: boolean };
const units = (frames: Record<string, unknown>[]) =>
  frames.filter((f) => f.frame === "speech_unit").map((f) => f.speech_unit as Unit);

Deno.test("the example brain answers with what it heard and shows a transcript action", async () => {
  await call(async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "the weather is nice" });
    const frames = await worker.take(3);
    assert.deepEqual(frames[0].action, {
      type: "transcript",
      json: JSON.stringify({ turn_id: "t1", text: "the weather is nice", typed: false }),
    });
    assert.deepEqual(units(frames).map((u) => [u.text, u.last]), [
      ["You said: the weather is nice", false],
      ["", true],
    ]);
  });
});

Deno.test("asking for a story gets a long reply to interrupt", async () => {
  await call(async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "tell me a story" });
    const frames = [await worker.next()];
    while (!units(frames).some((u) => u.last)) frames.push(await worker.next());
    const spoken = units(frames).filter((u) => !u.last);
    assert.equal(spoken[0].text, "You said: tell me a story");
    assert.ok(spoken.length >= 5, `a long reply, got ${spoken.length} units`);
  });
});

Deno.test("goodbye says goodbye and asks to end the session", async () => {
  await call(async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "OK, bye" });
    const frames = await worker.take(4);
    assert.match(units(frames)[0].text, /Goodbye/);
    assert.ok(frames.some((f) => f.frame === "end_session"));
  });
});

Deno.test("a page ping gets a pong action; silence gets a nudge", async () => {
  await call(async (worker) => {
    const ping = { label: "rtvi-ai", type: "client-message", id: "p1", data: { t: "ping", d: 7 } };
    worker.send("client_message", { json: JSON.stringify(ping) });
    const pong = await worker.next();
    assert.equal((pong.action as { type: string }).type, "pong");
    assert.equal(JSON.parse((pong.action as { json: string }).json).got, 7);
    worker.send("user_idle", { idle_ms: 5000, turn_id: "idle1" });
    assert.deepEqual(units(await worker.take(2)).map((u) => u.text), ["Are you still there?", ""]);
  });
});

Deno.test("an order is placed and recorded at once when speculative turns are off", async () => {
  const orders: string[] = [];
  const served = createExampleBrain(orders).serve({ hostname: "127.0.0.1", port: 0 });
  const worker = await TestWorker.dial(served.url, "ses_ex");
  try {
    worker.start("ses_ex");
    assert.equal((await worker.next()).frame, "greeting", "no Config: speculative turns stay off");
    worker.send("user_turn", { turn_id: "t1", text: "order 7 please" });
    const frames = await worker.take(5);
    assert.deepEqual(frames.map((f) => (f.action as { type: string } | null)?.type ?? f.frame), [
      "transcript",
      "speech_unit",
      "order_placed",
      "speech_unit",
      "speech_unit",
    ]);
    assert.deepEqual(units(frames).map((u) => u.text), [
      "Placing order 7.",
      "Order 7 is placed.",
      "",
    ]);
    assert.deepEqual(orders, ["7"]);
  } finally {
    await worker.close();
    await served.shutdown();
  }
});

Deno.test("with speculative turns on, an order is recorded only once its turn is confirmed", async () => {
  const orders: string[] = [];
  const served = createExampleBrain(orders).serve({ hostname: "127.0.0.1", port: 0 });
  const worker = await TestWorker.dial(served.url, "ses_ex");
  try {
    worker.start("ses_ex", { speculative_turns: true });
    const [config, greeting] = await worker.take(2);
    assert.deepEqual((config.config as { turns: unknown }).turns, { speculative: true });
    assert.equal(greeting.frame, "greeting");
    worker.send("user_turn", { turn_id: "t1", text: "order 42", speculative: true });
    assert.deepEqual(units([await worker.next()]).map((u) => u.text), ["Placing order 42."]);
    worker.send("cancel", { turn_id: "t1" }); // the caller went on: "order 42 and a cola"
    worker.send("user_turn", { turn_id: "t2", text: "order 42 and a cola", speculative: true });
    assert.deepEqual(units([await worker.next()]).map((u) => u.text), ["Placing order 42."]);
    assert.deepEqual(orders, [], "nothing recorded before the confirmation");
    worker.send("turn_confirmed", { turn_id: "t2" });
    const frames = await worker.take(4);
    assert.deepEqual(frames.map((f) => (f.action as { type: string } | null)?.type ?? f.frame), [
      "transcript",
      "order_placed",
      "speech_unit",
      "speech_unit",
    ]);
    assert.equal(JSON.parse((frames[0].action as { json: string }).json).turn_id, "t2");
    assert.deepEqual(orders, ["42"], "the cancelled turn recorded nothing");
  } finally {
    await worker.close();
    await served.shutdown();
  }
});
