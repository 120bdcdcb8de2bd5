// Speculative turns over a real socket: a turn's speech units go out at once, everything else it
// sends waits for TurnConfirmed and is dropped on Cancel; turns that are not speculative are as
// before.
import assert from "node:assert/strict";
import type { BrainHandlers, SayOutcome, Session, Turn } from "./mod.ts";
import type { CollectedDigits } from "./keypad.ts";
import { type TestWorker, withBrain } from "./test_worker.ts";

/** withBrain with the session started and its greeting taken. */
const withStartedBrain = (handlers: BrainHandlers, run: (worker: TestWorker) => Promise<void>) =>
  withBrain(handlers, async (worker) => {
    worker.start("ses_1");
    await worker.next(); // the greeting
    await run(worker);
  });

/** Runs `fn` with console.error collected (the SDK's log lines) instead of printed. */
async function withLog(fn: (lines: string[]) => Promise<void>): Promise<void> {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  try {
    await fn(lines);
  } finally {
    console.error = original;
  }
}

const text = (f: Record<string, unknown>) => (f.speech_unit as { text: string }).text;
const kind = (f: Record<string, unknown>) =>
  f.frame === "action" ? `action ${(f.action as { type: string }).type}` : String(f.frame);

/** A turn that is not t1 answers plainly, so the test can show nothing of t1 came in between. */
async function* answerPlainly(turn: Turn) {
  yield `answer ${turn.id}`;
}

Deno.test("a confirmed speculative turn sends its units at once and its held sends on TurnConfirmed, in order", async () => {
  const seen: unknown[] = [];
  await withStartedBrain({
    async *onTurn(turn, session) {
      seen.push(turn.speculative);
      session.dispatch("looked_up", { order: 42 });
      session.transfer("tel:+918041234567");
      yield "Placing order 42.";
      seen.push(await turn.confirmed);
      session.dispatch("order_placed", { order: 42 }); // after the confirmation: at once
      yield "It is placed.";
    },
  }, async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "order 42", speculative: true });
    const first = await worker.next();
    assert.equal(text(first), "Placing order 42.", "the unit went first; the action waits");
    worker.send("turn_confirmed", { turn_id: "t1" });
    const rest = await worker.take(5);
    assert.deepEqual(rest.map(kind), [
      "action looked_up",
      "transfer",
      "action order_placed",
      "speech_unit",
      "speech_unit",
    ]);
    assert.deepEqual((rest[1].transfer as { target: string }).target, "tel:+918041234567");
    assert.deepEqual(rest.slice(3).map(text), ["It is placed.", ""]);
    assert.deepEqual(seen, [true, true]);
  });
});

Deno.test("a cancelled speculative turn never sends its held action or end, and its handler is stopped", async () => {
  const seen: Record<string, unknown> = {};
  await withLog(async (log) => {
    await withStartedBrain({
      async *onTurn(turn, session) {
        if (turn.id !== "t1") return yield* answerPlainly(turn);
        try {
          session.dispatch("order_placed", { order: 42 });
          session.end("order placed");
          yield "Placing order 42.";
          seen.confirmed = await turn.confirmed;
          if (!seen.confirmed) return;
          yield "never sent";
        } finally {
          seen.aborted = turn.signal.aborted;
        }
      },
    }, async (worker) => {
      worker.send("user_turn", { turn_id: "t1", text: "order 42", speculative: true });
      assert.equal(text(await worker.next()), "Placing order 42.");
      worker.send("cancel", { turn_id: "t1" });
      // The caller went on: their words lead the next turn, whose frames come next, alone.
      worker.send("user_turn", { turn_id: "t2", text: "order 42 and a cola" });
      const frames = await worker.take(2);
      assert.deepEqual(frames.map(text), ["answer t2", ""]);
    });
    assert.deepEqual(seen, { confirmed: false, aborted: true });
    const dropped = log.filter((l) => l.includes("dropped"));
    assert.equal(dropped.length, 1, log.join("\n"));
    assert.match(dropped[0], /dropped action, end_session: speculative turn t1 was cancelled/);
  });
});

Deno.test("a speculative turn's sends after its Cancel are dropped; sends from outside it go at once", async () => {
  await withLog(async (log) => {
    await withStartedBrain({
      async *onTurn(turn, session) {
        if (turn.id !== "t1") return yield* answerPlainly(turn);
        yield "Let me look.";
        // Work that goes on past the Cancel (a model call not given the signal), then a send.
        await new Promise((r) => turn.signal.addEventListener("abort", r));
        session.dispatch("late", {});
      },
      onDtmf: (dtmf, session) => session.dispatch("key", { digit: dtmf.digit }),
    }, async (worker) => {
      worker.send("user_turn", { turn_id: "t1", text: "hmm", speculative: true });
      assert.equal(text(await worker.next()), "Let me look.");
      worker.send("dtmf", { digit: "5", duration_ms: 80 });
      assert.equal(kind(await worker.next()), "action key", "not held: not the turn's");
      worker.send("cancel", { turn_id: "t1" });
      worker.send("user_turn", { turn_id: "t2", text: "hmm, what about tomorrow" });
      assert.deepEqual((await worker.take(2)).map(text), ["answer t2", ""]);
    });
    assert.deepEqual(log.filter((l) => l.includes("dropped")).map((l) => l.split("\n")[0]), [
      "[brain] dropped action: speculative turn t1 was cancelled session=ses_1 turn=t1",
    ]);
  });
});

Deno.test("a turn that is not speculative is confirmed at once and sends as before", async () => {
  await withStartedBrain({
    async *onTurn(turn, session) {
      session.dispatch("transcript", { text: turn.text });
      yield `speculative ${turn.speculative}, confirmed ${await turn.confirmed}`;
    },
  }, async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "hello" });
    const frames = await worker.take(3);
    assert.deepEqual(frames.map(kind), ["action transcript", "speech_unit", "speech_unit"]);
    assert.equal(text(frames[1]), "speculative false, confirmed true");
  });
});

Deno.test("a held configure applies on confirmation; a held say and key collection resolve as dropped on Cancel", async () => {
  let session!: Session;
  const outcomes: Promise<[SayOutcome, CollectedDigits]>[] = [];
  const threw: string[] = [];
  await withLog(async () => {
    await withStartedBrain({
      async *onTurn(turn, s) {
        session = s;
        s.configure({ tts: { voice: "VOICE_ARJUN" } });
        try {
          s.collectDigits({} as never); // bad options still throw at once
        } catch (err) {
          threw.push((err as Error).message);
        }
        outcomes.push(Promise.all([s.say("One moment."), s.collectDigits({ maxDigits: 4 })]));
        yield `answer ${turn.id}`;
      },
    }, async (worker) => {
      worker.send("user_turn", { turn_id: "t1", text: "a", speculative: true });
      assert.deepEqual((await worker.take(2)).map(text), ["answer t1", ""]);
      assert.equal(session.config.tts?.voice, undefined, "not applied before confirmation");
      worker.send("turn_confirmed", { turn_id: "t1" });
      const [config, say] = await worker.take(2);
      assert.deepEqual(config.config, {
        tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_UNSPECIFIED" },
        stt: null,
        idle: null,
        events: null,
        outbound_greeting: null,
        keypad: null,
        turns: null,
      });
      assert.equal((say.say as { say_id: string }).say_id, "say.1");
      assert.equal(session.config.tts?.voice, "VOICE_ARJUN");
      worker.send("say_refused", { say_id: "say.1", detail: "the bot is speaking" });
      worker.send("dtmf", { digit: "7", duration_ms: 80 });
      worker.send("dtmf", { digit: "7", duration_ms: 80 });
      worker.send("dtmf", { digit: "0", duration_ms: 80 });
      worker.send("dtmf", { digit: "1", duration_ms: 80 });
      const [said, got] = await outcomes[0];
      assert.equal(said.refused, "the bot is speaking");
      assert.deepEqual([got.digits, got.reason], ["7701", "max_digits"]);

      worker.send("user_turn", { turn_id: "t2", text: "b", speculative: true });
      assert.deepEqual((await worker.take(2)).map(text), ["answer t2", ""]);
      worker.send("cancel", { turn_id: "t2" });
      const [dropped, none] = await outcomes[1];
      assert.deepEqual(dropped, {
        turnId: "",
        heard: "",
        cutOff: false,
        refused: "its speculative turn was cancelled",
      });
      assert.deepEqual([none.digits, none.reason], ["", "cancelled"]);
      worker.send("user_turn", { turn_id: "t3", text: "c" });
      const t3 = await worker.take(3); // t3's own config, say; nothing of t2 before them
      assert.deepEqual(t3.map(kind), ["config", "say", "speech_unit"]);
      assert.equal((t3[1].say as { say_id: string }).say_id, "say.2");
    });
  });
  assert.equal(threw.length, 3);
  assert.match(threw[0], /give maxDigits, terminator or both/);
});

Deno.test("the call's end settles a speculative turn still waiting as not confirmed", async () => {
  let confirmed: boolean | undefined;
  await withStartedBrain({
    onTurn(turn) {
      turn.confirmed.then((taken) => (confirmed = taken));
      return "Maybe.";
    },
  }, async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "well", speculative: true });
    await worker.take(2);
    worker.send("end", { reason: "hangup" });
    await worker.closed; // the brain closes the socket once the session has ended
  });
  assert.equal(confirmed, false);
});

Deno.test("a Cancel after the handler returned still aborts the speculative turn's signal", async () => {
  const signals = new Map<string, AbortSignal>();
  await withStartedBrain({
    onTurn(turn) {
      signals.set(turn.id, turn.signal); // work the handler leaves running would watch it
      return `answer ${turn.id}`;
    },
  }, async (worker) => {
    worker.send("user_turn", { turn_id: "t1", text: "well", speculative: true });
    await worker.take(2); // its unit and last unit: the handler is over
    worker.send("cancel", { turn_id: "t1" });
    worker.send("user_turn", { turn_id: "t2", text: "well, no" });
    await worker.take(2); // frames are handled in order: the Cancel has been too
  });
  assert.equal(signals.get("t1")?.aborted, true);
  assert.equal(signals.get("t2")?.aborted, false);
});
