// The brain SDK over a real WebSocket, driven by a worker-side client that speaks the proto.
import assert from "node:assert/strict";
import { createBrain, type HeardText, type Session } from "./mod.ts";
import { deferred, TestWorker, withBrain } from "./test_worker.ts";

const unit = (turn_id: string, n: number | "end", text: string) => ({
  turn_id,
  unit_id: `${turn_id}.${n}`,
  text,
  last: n === "end",
});

Deno.test("the greeting is sent after the Config frames onSessionStart caused", async () => {
  let seen: Session | undefined;
  await withBrain({
    async onSessionStart(session) {
      seen = session;
      await new Promise((r) => setTimeout(r, 0)); // an async start still orders its frames
      session.configure({ tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" } });
      session.configure({ stt: { language: "LANGUAGE_HI" } });
      return "Namaste";
    },
    onTurn: () => {},
  }, async (worker) => {
    worker.start("ses_1", { customer: "c-42" }, {
      tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" },
      idle: { timeout_ms: 3000 },
    });
    const frames = await worker.take(3);
    assert.deepEqual(frames.map((f) => f.frame), ["config", "config", "greeting"]);
    assert.deepEqual(frames[0].config, {
      tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" },
      stt: null,
      idle: null,
      outbound_greeting: null,
      keypad: null,
      turns: null,
      events: null,
    });
    assert.deepEqual(frames[1].config, {
      tts: null,
      stt: { language: "LANGUAGE_HI" },
      idle: null,
      outbound_greeting: null,
      keypad: null,
      turns: null,
      events: null,
    });
    assert.deepEqual(frames[2].greeting, { text: "Namaste" });
    assert.equal(seen?.id, "ses_1");
    assert.equal(seen?.agentId, "agt_test");
    assert.deepEqual(seen?.init, { customer: "c-42" });
    assert.deepEqual(seen?.config, {
      tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" },
      stt: { language: "LANGUAGE_HI" },
      idle: { timeout_ms: 3000 },
    });
  });
});

Deno.test("without onSessionStart the greeting is empty; seq counts from 1", async () => {
  await withBrain({ onTurn: (turn) => `echo ${turn.text}` }, async (worker) => {
    worker.start("ses_1");
    worker.send("user_turn", { turn_id: "t1", text: "hi" });
    const frames = await worker.take(3);
    assert.deepEqual(frames.map((f) => f.seq), [1, 2, 3]);
    assert.ok(frames.every((f) => f.timestamp_ms > 1_700_000_000_000));
    assert.deepEqual(frames[0].greeting, { text: "" });
    assert.deepEqual(frames[1].speech_unit, unit("t1", 1, "echo hi"));
    assert.deepEqual(frames[2].speech_unit, unit("t1", "end", ""));
  });
});

Deno.test("a typed turn reaches onTurn marked typed; a spoken one is not", async () => {
  const seen: [string, string, boolean][] = [];
  await withBrain({
    onTurn: (turn) => {
      seen.push([turn.id, turn.text, turn.typed]);
      return turn.typed ? "typed" : "spoken";
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next(); // greeting
    worker.send("user_turn", { turn_id: "t1", text: "hello" });
    const spoken = await worker.take(2);
    worker.send("user_turn", { turn_id: "t2", text: "order 42", typed: true });
    const typed = await worker.take(2);
    assert.deepEqual(seen, [["t1", "hello", false], ["t2", "order 42", true]]);
    assert.deepEqual(spoken[0].speech_unit, unit("t1", 1, "spoken"));
    assert.deepEqual(typed[0].speech_unit, unit("t2", 1, "typed"));
  });
});

Deno.test("each yielded sentence is sent while the turn handler is still working", async () => {
  const gate = deferred();
  let handlerDone = false;
  await withBrain({
    async *onTurn() {
      yield "First sentence.";
      await gate.promise;
      yield "Second sentence.";
      handlerDone = true;
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next(); // greeting
    worker.send("user_turn", { turn_id: "t1", text: "go" });
    assert.deepEqual((await worker.next()).speech_unit, unit("t1", 1, "First sentence."));
    assert.equal(handlerDone, false, "the first unit came before the handler finished");
    gate.resolve();
    const [second, last] = await worker.take(2);
    assert.deepEqual(second.speech_unit, unit("t1", 2, "Second sentence."));
    assert.deepEqual(last.speech_unit, unit("t1", "end", ""));
  });
});

Deno.test("a new turn does not cancel a running one", async () => {
  const gate = deferred();
  await withBrain({
    async *onTurn(turn) {
      if (turn.id === "t1") await gate.promise;
      yield `answer ${turn.id}`;
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("user_turn", { turn_id: "t1", text: "slow" });
    worker.send("user_turn", { turn_id: "t2", text: "fast" });
    const t2 = await worker.take(2);
    assert.deepEqual(t2.map((f) => f.speech_unit), [
      unit("t2", 1, "answer t2"),
      unit("t2", "end", ""),
    ]);
    gate.resolve();
    const t1 = await worker.take(2);
    assert.deepEqual(t1.map((f) => f.speech_unit), [
      unit("t1", 1, "answer t1"),
      unit("t1", "end", ""),
    ]);
  });
});

Deno.test("Cancel aborts the turn's signal, drops what it yields later and sends no last unit", async () => {
  const generatorClosed = deferred();
  let aborted = false;
  await withBrain({
    async *onTurn(turn) {
      if (turn.id !== "t1") {
        yield "next turn";
        return;
      }
      try {
        yield "Once upon a time.";
        await new Promise((r) => turn.signal.addEventListener("abort", r));
        aborted = turn.signal.aborted;
        yield "This must not be sent.";
      } finally {
        generatorClosed.resolve();
      }
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("user_turn", { turn_id: "t1", text: "story" });
    assert.deepEqual((await worker.next()).speech_unit, unit("t1", 1, "Once upon a time."));
    worker.send("cancel", { turn_id: "t1" });
    await generatorClosed.promise;
    assert.equal(aborted, true);
    // The next frames belong to the next turn: nothing of t1 came in between.
    worker.send("user_turn", { turn_id: "t2", text: "and now?" });
    const frames = await worker.take(2);
    assert.deepEqual(frames.map((f) => f.speech_unit), [
      unit("t2", 1, "next turn"),
      unit("t2", "end", ""),
    ]);
  });
});

Deno.test("Heard, Finalize and End call onSessionEnd once with the heard list, then the brain closes", async () => {
  const ends: { reason: string; heard: readonly HeardText[] }[] = [];
  const onHeard: HeardText[] = [];
  await withBrain({
    onTurn: () => "Hello there. How are you?",
    onHeard: (h) => void onHeard.push(h),
    onSessionEnd: (_s, end) => void ends.push(end),
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    const h1 = { unit_id: "t1.1", turn_id: "t1", text: "Hello there.", cut_off: false };
    const h2 = { unit_id: "t1.2", turn_id: "t1", text: "How", cut_off: true };
    worker.send("heard", h1);
    worker.send("heard", h2);
    worker.send("finalize", { heard: [h1, h2] });
    worker.send("end", { reason: "caller_hung_up" });
    await worker.closed; // the brain closes the socket after End
    const expected = [
      { unitId: "t1.1", turnId: "t1", text: "Hello there.", cutOff: false },
      { unitId: "t1.2", turnId: "t1", text: "How", cutOff: true },
    ];
    assert.deepEqual(onHeard, expected);
    assert.deepEqual(ends, [{ reason: "caller_hung_up", heard: expected }]);
  });
  assert.equal(ends.length, 1, "the close after End does not end the session again");
});

Deno.test("a socket closed without End ends the session as disconnected", async () => {
  const ended = deferred<{ reason: string; heard: readonly HeardText[]; session: Session }>();
  let calls = 0;
  await withBrain({
    onTurn: () => {},
    onSessionEnd: (session, end) => {
      calls += 1;
      ended.resolve({ ...end, session });
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("heard", {
      unit_id: "greeting.1",
      turn_id: "greeting",
      text: "Hi",
      cut_off: false,
    });
    await worker.close();
    const end = await ended.promise;
    assert.equal(end.reason, "disconnected");
    assert.deepEqual(end.heard, [{
      unitId: "greeting.1",
      turnId: "greeting",
      text: "Hi",
      cutOff: false,
    }]);
    assert.equal(end.session.ended, true);
  });
  assert.equal(calls, 1);
});

Deno.test("ClientMessage reaches onRtvi as the page's object, and dispatch becomes an Action", async () => {
  const page = {
    label: "rtvi-ai",
    type: "client-message",
    id: "a1b2",
    data: { t: "cart", d: { items: [1, 2], note: "ünïcode" } },
  };
  const received = deferred<unknown>();
  await withBrain({
    onTurn: () => {},
    onRtvi(message, session) {
      received.resolve(message);
      session.dispatch("cart_seen", { count: 2 });
      return "ignored: onRtvi cannot speak";
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("client_message", { json: JSON.stringify(page) });
    assert.deepEqual(await received.promise, page);
    const action = await worker.next();
    assert.equal(action.frame, "action");
    assert.deepEqual(action.action, { type: "cart_seen", json: '{"count":2}' });
  });
});

Deno.test("configure throws on an unknown enum name or field and sends nothing", async () => {
  const errors: string[] = [];
  await withBrain({
    onTurn(_turn, session) {
      for (const bad of [{ tts: { voice: "VOICE_BOGUS" } }, { tts: { speed: 2 } }]) {
        try {
          session.configure(bad as never);
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      return "still talking";
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("user_turn", { turn_id: "t1", text: "switch voice" });
    const frames = await worker.take(2);
    assert.deepEqual(frames.map((f) => f.frame), ["speech_unit", "speech_unit"]);
    assert.equal(errors.length, 2);
    assert.match(errors[0], /tts\.voice.*VOICE_BOGUS.*VOICE_ANANYA, VOICE_ARJUN/);
    assert.match(errors[1], /tts\.speed: unknown field/);
  });
});

Deno.test("a throwing handler is logged and its turn still ends with the last unit", async () => {
  const logged: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void logged.push(args.join(" "));
  try {
    await withBrain({
      onSessionStart() {
        throw new Error("no database");
      },
      onTurn() {
        throw new Error("model unavailable");
      },
    }, async (worker) => {
      worker.start("ses_1");
      assert.deepEqual((await worker.next()).greeting, { text: "" });
      worker.send("user_turn", { turn_id: "t1", text: "hello" });
      assert.deepEqual((await worker.next()).speech_unit, unit("t1", "end", ""));
    });
  } finally {
    console.error = original;
  }
  assert.ok(logged.some((l) => l.includes("onSessionStart failed") && l.includes("no database")));
  assert.ok(logged.some((l) => l.includes("turn=t1") && l.includes("model unavailable")));
  assert.ok(logged.every((l) => !l.includes("hello")), "the caller's words are not logged");
});

Deno.test("UserIdle replies like a turn, and passes with only the last unit when unhandled", async () => {
  const idles: { id: string; idleMs: number }[] = [];
  await withBrain({
    onTurn: () => {},
    onUserIdle: ({ id, idleMs }) => {
      idles.push({ id, idleMs });
      return "Are you still there?";
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("user_idle", { idle_ms: 5000, turn_id: "idle1" });
    const frames = await worker.take(2);
    assert.deepEqual(frames.map((f) => f.speech_unit), [
      unit("idle1", 1, "Are you still there?"),
      unit("idle1", "end", ""),
    ]);
    assert.deepEqual(idles, [{ id: "idle1", idleMs: 5000 }]);
  });
  await withBrain({ onTurn: () => {} }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("user_idle", { idle_ms: 5000, turn_id: "idle1" });
    assert.deepEqual((await worker.next()).speech_unit, unit("idle1", "end", ""));
  });
});

Deno.test("session.end sends EndSession once", async () => {
  await withBrain({
    onTurn(_turn, session) {
      session.end("done");
      session.end("again");
      return "Bye.";
    },
  }, async (worker) => {
    worker.start("ses_1");
    await worker.next();
    worker.send("user_turn", { turn_id: "t1", text: "bye" });
    const frames = await worker.take(3);
    assert.deepEqual(frames.map((f) => f.frame), ["end_session", "speech_unit", "speech_unit"]);
    assert.deepEqual(frames[0].end_session, { reason: "done" });
  });
});

Deno.test("the HTTP side answers 400 without an upgrade or session_id and 404 off its path", async () => {
  const served = createBrain({ onTurn: () => {} }).serve({ port: 0, path: "/brain" });
  try {
    const http = served.url.replace("ws://", "http://");
    const plain = await fetch(`${http}?session_id=ses_1`);
    assert.equal(plain.status, 400);
    assert.match(await plain.text(), /WebSocket upgrade/);
    const noId = await fetch(http, { headers: { upgrade: "websocket", connection: "upgrade" } });
    assert.equal(noId.status, 400);
    assert.match(await noId.text(), /session_id/);
    const other = await fetch(http.replace("/brain", "/other"));
    assert.equal(other.status, 404);
    await other.body?.cancel();
  } finally {
    await served.shutdown();
  }
});

Deno.test("accept runs a call over a socket the application upgraded itself", async () => {
  const brain = createBrain({ onSessionStart: () => "accepted", onTurn: () => {} });
  const calls: Promise<void>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    calls.push(brain.accept(socket, "ses_1"));
    return response;
  });
  try {
    const worker = await TestWorker.dial(`ws://127.0.0.1:${server.addr.port}/`, "ses_1");
    worker.start("ses_1");
    assert.deepEqual((await worker.next()).greeting, { text: "accepted" });
    worker.send("end", { reason: "done" });
    await worker.closed;
    await Promise.all(calls); // accept resolves once the call is over
  } finally {
    await server.shutdown();
  }
});

Deno.test("aborting serve's signal stops the server and ends open calls as disconnected", async () => {
  const ended = deferred<string>();
  const stop = new AbortController();
  const served = createBrain({ onTurn: () => {}, onSessionEnd: (_s, e) => ended.resolve(e.reason) })
    .serve({ port: 0, signal: stop.signal });
  const worker = await TestWorker.dial(served.url, "ses_1");
  worker.start("ses_1");
  await worker.next();
  stop.abort();
  await worker.closed;
  assert.equal(await ended.promise, "disconnected");
  await served.finished;
});
