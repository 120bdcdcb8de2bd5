// session.collectDigits over a real WebSocket, the worker's side played by TestWorker: each way a
// collection stops, type-ahead over its prompt, the sensitive flag sent and put back, one at a time.
import assert from "node:assert/strict";
import { type CollectedDigits, createBrain, type Dtmf, type Session } from "./mod.ts";
import { TestWorker } from "./test_worker.ts";

interface Rig {
  worker: TestWorker;
  session: Session;
  /** Keys that reached onDtmf. */
  dtmf: Dtmf[];
  press(...digits: string[]): void;
}

async function withCall(run: (rig: Rig) => Promise<void>): Promise<void> {
  let session: Session | undefined;
  const dtmf: Dtmf[] = [];
  const served = createBrain({
    onSessionStart: (s) => void (session = s),
    onTurn: () => {},
    onDtmf: (d) => void dtmf.push(d),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_1");
  try {
    worker.start("ses_1");
    assert.equal((await worker.next()).frame, "greeting");
    const press = (...digits: string[]) =>
      digits.forEach((digit) => worker.send("dtmf", { digit, duration_ms: 100 }));
    await run({ worker, session: session!, dtmf, press });
  } finally {
    await worker.close();
    await served.shutdown();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether `p` has settled within `ms`. */
async function settled(p: Promise<unknown>, ms: number): Promise<boolean> {
  return await Promise.race([p.then(() => true), sleep(ms).then(() => false)]);
}

const plain = (r: CollectedDigits) => ({ digits: r.digits, reason: r.reason });

Deno.test("a terminator ends the collection and is not a digit; its keys skip onDtmf, later ones reach it", async () => {
  await withCall(async ({ session, dtmf, press }) => {
    const got = session.collectDigits({ maxDigits: 10, terminator: "#" });
    press("1", "2", "*", "3", "#");
    assert.deepEqual(plain(await got), { digits: "12*3", reason: "terminator" });
    press("9");
    await sleep(100);
    assert.deepEqual(dtmf.map((d) => d.digit), ["9"]);
  });
});

Deno.test("maxDigits ends the collection at the last digit; a key after it goes to onDtmf", async () => {
  await withCall(async ({ session, dtmf, press }) => {
    const got = session.collectDigits({ maxDigits: 3 });
    press("4", "5", "6", "7");
    assert.deepEqual(plain(await got), { digits: "456", reason: "max_digits" });
    await sleep(100);
    assert.deepEqual(dtmf.map((d) => d.digit), ["7"]);
  });
});

Deno.test("the per-digit timeout runs from the start for the first key and from each key after", async () => {
  await withCall(async ({ session, press }) => {
    const none = await session.collectDigits({ terminator: "#", digitTimeoutMs: 150 });
    assert.deepEqual(plain(none), { digits: "", reason: "digit_timeout" });

    const got = session.collectDigits({ terminator: "#", digitTimeoutMs: 300 });
    for (const digit of ["1", "2", "3"]) {
      await sleep(150); // each key well inside the timeout from the one before
      press(digit);
    }
    assert.equal(await settled(got, 100), false, "stopped before the timeout after the last key");
    assert.deepEqual(plain(await got), { digits: "123", reason: "digit_timeout" });
  });
});

Deno.test("the total timeout stops a caller who keeps pressing", async () => {
  await withCall(async ({ session, press }) => {
    const got = session.collectDigits({
      terminator: "#",
      digitTimeoutMs: 300,
      totalTimeoutMs: 600,
    });
    let pressed = 0;
    while (!(await settled(got, 100))) {
      press("5");
      pressed++;
    }
    const result = await got;
    assert.equal(result.reason, "total_timeout");
    assert.ok(pressed >= 4 && result.digits.length >= 4, `${pressed} pressed, got ${result}`);
  });
});

Deno.test("the call ending stops a collection with the keys it had", async () => {
  await withCall(async ({ worker, session, press }) => {
    const got = session.collectDigits({ maxDigits: 6 });
    press("1", "2");
    await sleep(100);
    worker.send("end", { reason: "hangup" });
    assert.deepEqual(plain(await got), { digits: "12", reason: "ended" });
    assert.deepEqual(
      plain(await session.collectDigits({ maxDigits: 1 })),
      { digits: "", reason: "ended" },
    );
  });
});

Deno.test("keys pressed during the prompt count, and the clocks start when it has been heard", async () => {
  await withCall(async ({ worker, session, press }) => {
    const got = session.collectDigits({
      prompt: "Key in your account number, then hash.",
      terminator: "#",
      digitTimeoutMs: 200,
    });
    const say = await worker.next();
    assert.deepEqual(say.say, { say_id: "say.1", text: "Key in your account number, then hash." });
    worker.send("say_started", { say_id: "say.1", turn_id: "t1" });
    press("7", "8");
    assert.equal(await settled(got, 500), false, "a clock ran while the prompt played");
    worker.send("heard", { unit_id: "say.1", turn_id: "t1", text: "Key in your", cut_off: true });
    const result = await got;
    assert.deepEqual(plain(result), { digits: "78", reason: "digit_timeout" });
    assert.equal(result.promptRefused, undefined);
  });
});

Deno.test("typed-ahead keys that fill the collection end it during the prompt; it resolves once the prompt is over", async () => {
  await withCall(async ({ worker, session, dtmf, press }) => {
    const got = session.collectDigits({ prompt: "Press 1 for sales.", maxDigits: 1 });
    await worker.next(); // the say
    worker.send("say_started", { say_id: "say.1", turn_id: "t1" });
    press("1", "2");
    await sleep(100);
    assert.deepEqual(dtmf.map((d) => d.digit), ["2"]); // the collection had stopped at "1"
    assert.equal(await settled(got, 200), false, "resolved while its prompt still played");
    worker.send("heard", { unit_id: "say.1", turn_id: "t1", text: "Press 1 for sales." });
    assert.deepEqual(plain(await got), { digits: "1", reason: "max_digits" });
  });
});

Deno.test("a refused prompt starts the clocks at once and says why", async () => {
  await withCall(async ({ worker, session }) => {
    const got = session.collectDigits({ prompt: "Your PIN?", maxDigits: 4, digitTimeoutMs: 150 });
    await worker.next();
    worker.send("say_refused", { say_id: "say.1", detail: "the caller holds the floor" });
    const result = await got;
    assert.equal(result.reason, "digit_timeout");
    assert.equal(result.promptRefused, "the caller holds the floor");
  });
});

Deno.test("a sensitive collection sets keypad.sensitive before its prompt, clears it after, and never shows its digits", async () => {
  await withCall(async ({ worker, session, press }) => {
    const got = session.collectDigits({ prompt: "Your PIN?", maxDigits: 4, sensitive: true });
    const [on, say] = await worker.take(2);
    assert.equal(on.frame, "config");
    assert.deepEqual((on.config as { keypad: unknown }).keypad, { sensitive: true });
    assert.equal(say.frame, "say");
    assert.deepEqual(session.config.keypad, { sensitive: true });
    worker.send("say_started", { say_id: "say.1", turn_id: "t1" });
    worker.send("heard", { unit_id: "say.1", turn_id: "t1", text: "Your PIN?" });
    press("4", "3", "2", "1");
    const result = await got;
    const off = await worker.next();
    assert.deepEqual((off.config as { keypad: unknown }).keypad, { sensitive: false });
    assert.deepEqual(session.config.keypad, { sensitive: false });

    assert.equal(result.digits, "4321");
    assert.equal(result.sensitive, true);
    const shown = [
      String(result),
      `${result}`,
      JSON.stringify(result),
      JSON.stringify({ result }),
      Deno.inspect(result),
      Deno.inspect({ nested: [result] }),
    ];
    for (const text of shown) {
      assert.ok(!/4321|4|3|2|1/.test(text.replace(/\*+/g, "")), `digits shown: ${text}`);
      assert.ok(text.includes("****"), text);
    }
    assert.deepEqual(JSON.parse(JSON.stringify(result)), {
      digits: "****",
      reason: "max_digits",
      sensitive: true,
    });
    // Not sensitive: shown as they are.
    const menu = session.collectDigits({ maxDigits: 1 });
    press("2");
    assert.equal(String(await menu), 'CollectedDigits { digits: "2", reason: "max_digits" }');
  });
});

Deno.test("a sensitive collection while the brain already set keypad.sensitive leaves it set", async () => {
  await withCall(async ({ worker, session, press }) => {
    session.configure({ keypad: { sensitive: true } });
    await worker.next();
    const got = session.collectDigits({ maxDigits: 1, sensitive: true });
    press("9");
    await got;
    session.dispatch("after");
    assert.equal((await worker.next()).frame, "action"); // no Config in between
    assert.deepEqual(session.config.keypad, { sensitive: true });
  });
});

Deno.test("one collection at a time: a second is an error that sends nothing, and bad options are refused", async () => {
  await withCall(async ({ worker, session, press }) => {
    const first = session.collectDigits({ maxDigits: 2, sensitive: true });
    assert.equal((await worker.next()).frame, "config");
    assert.throws(
      () => session.collectDigits({ maxDigits: 1, prompt: "Again?" }),
      /a collection is already running/,
    );
    press("1", "2");
    assert.deepEqual(plain(await first), { digits: "12", reason: "max_digits" });
    assert.equal((await worker.next()).frame, "config"); // the flag cleared; no Say was sent

    const bad: [unknown, RegExp][] = [
      [{}, /give maxDigits, terminator or both/],
      [{ maxDigits: 0 }, /maxDigits must be an integer of 1 to 64/],
      [{ maxDigits: 2.5 }, /maxDigits/],
      [{ terminator: "##" }, /terminator must be one key/],
      [{ terminator: "x" }, /terminator must be one key/],
      [{ maxDigits: 4, digitTimeoutMs: 0 }, /digitTimeoutMs must be an integer/],
      [{ maxDigits: 4, totalTimeoutMs: 10_000_000 }, /totalTimeoutMs/],
      [{ maxDigits: 4, prompt: " " }, /prompt must be a non-empty string/],
      [{ maxDigits: 4, sensitive: "yes" }, /sensitive must be a boolean/],
      [{ maxDigits: 4, max_digits: 4 }, /unknown option max_digits/],
    ];
    for (const [options, why] of bad) {
      // deno-lint-ignore no-explicit-any
      assert.throws(() => session.collectDigits(options as any), why);
    }
    session.dispatch("after");
    assert.equal((await worker.next()).frame, "action"); // nothing was sent by the refusals
    const again = session.collectDigits({ maxDigits: 1 });
    press("3");
    assert.equal((await again).digits, "3");
  });
});
