// The keypad example over a real socket: an account number ending in #, then a sensitive PIN.
import assert from "node:assert/strict";
import { type BrainFrame, TestWorker } from "../test_worker.ts";
import { createKeypadBrain } from "./keypad.ts";

async function call(run: (worker: TestWorker, steps: string[]) => Promise<void>): Promise<void> {
  const steps: string[] = [];
  const served = createKeypadBrain((line) => steps.push(line))
    .serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_kp");
  try {
    worker.start("ses_kp");
    assert.deepEqual((await worker.next()).greeting, { text: "Welcome to the city bank." });
    worker.send("heard", { unit_id: "greeting.1", turn_id: "greeting", text: "Welcome" });
    await run(worker, steps);
  } finally {
    await worker.close();
    await served.shutdown();
  }
}

let turn = 0;
/** The next frame is a Say: it starts, `keys` are pressed over it, and it is heard whole. */
async function sayWith(worker: TestWorker, keys = ""): Promise<string> {
  const f = await worker.next();
  const { say_id, text } = f.say as { say_id: string; text: string };
  const turn_id = `s${++turn}`;
  worker.send("say_started", { say_id, turn_id });
  for (const digit of keys) worker.send("dtmf", { digit, duration_ms: 100 });
  worker.send("heard", { unit_id: say_id, turn_id, text });
  return text;
}

const keypadOf = (f: BrainFrame) => (f.config as { keypad: unknown }).keypad;

Deno.test("the keypad example takes an account number and a PIN, verifies them and hangs up", async () => {
  await call(async (worker, steps) => {
    assert.match(await sayWith(worker, "12345678#"), /account number, then press hash/);
    assert.deepEqual(keypadOf(await worker.next()), { sensitive: true });
    assert.match(await sayWith(worker, "4321"), /four digit PIN/);
    assert.deepEqual(keypadOf(await worker.next()), { sensitive: false });
    assert.equal(await sayWith(worker), "Thank you. Account ending 5 6 7 8 is verified. Goodbye.");
    assert.deepEqual((await worker.next()).end_session, { reason: "keypad_flow_done" });
    assert.deepEqual(steps, [
      "collecting the account number",
      "collecting the PIN",
      "PIN accepted",
    ]);
  });
});

Deno.test("the keypad example refuses a wrong PIN without saying or logging it", async () => {
  await call(async (worker, steps) => {
    await sayWith(worker, "12345678#");
    await worker.next(); // sensitive on
    await sayWith(worker, "9999");
    await worker.next(); // sensitive off
    const last = await sayWith(worker);
    assert.equal(last, "That PIN does not match account ending 5 6 7 8. Goodbye.");
    assert.ok(!steps.join(" ").includes("9999"));
    assert.equal(steps.at(-1), "PIN not accepted (max_digits)");
  });
});

Deno.test("the keypad example asks again when the account number has too few digits", async () => {
  await call(async (worker, steps) => {
    await sayWith(worker, "12#");
    assert.equal(await sayWith(worker), "Sorry, I did not get that.");
    assert.match(await sayWith(worker, "12#"), /account number/);
    assert.equal(await sayWith(worker), "Sorry, I did not get that.");
    assert.match(await sayWith(worker), /call again/);
    assert.deepEqual(steps, ["collecting the account number", "collecting the account number"]);
  });
});
