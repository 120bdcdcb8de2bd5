// RTVI on the chat channel, fed text frames: readiness, requests, page messages, liveness.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { RtviSession } from "./session.ts";

function harness() {
  const sent: Record<string, unknown>[] = [];
  const events: string[] = [];
  const session = new RtviSession((text) => sent.push(JSON.parse(text)), {
    onClientReady: () => events.push("ready"),
    onPageMessage: (m) => {
      events.push(m.type);
      const t = (m.data as { t?: string })?.t;
      if (t === "fail") throw new Error("brain is gone");
      return { ok: t };
    },
    onSendText: (text) => {
      if (text === "not now") throw new Error("The call has not started.");
      events.push(`typed ${text}`);
    },
    onDisconnectBot: () => events.push("disconnect"),
    onTrackStatus: (i, on) => events.push(`track${i}:${on}`),
  });
  return { sent, events, session };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("client-ready is answered by bot-ready with the same id, once per call start", () => {
  const { sent, events, session } = harness();
  const ready = {
    label: "rtvi-ai",
    type: "client-ready",
    id: "52b3416d",
    data: { version: "2.1.0" },
  };
  session.receive(JSON.stringify(ready));
  assertEquals(sent, [{
    label: "rtvi-ai",
    type: "bot-ready",
    id: "52b3416d",
    data: { version: "2.1.0", about: { library: "voice-call-service", library_version: "0.1.0" } },
  }]);
  session.receive(JSON.stringify({ ...ready, id: "00000002" }));
  assertEquals(sent.length, 2, "a repeated client-ready still gets bot-ready");
  assertEquals(events, ["ready"], "but the call starts once");
});

Deno.test("pings and trackStatus are not RTVI and are not answered", () => {
  const { sent, events, session } = harness();
  const before = session.lastHeardAt;
  session.receive("ping: 1790000000000");
  session.receive(JSON.stringify({
    type: "signalling",
    message: { type: "trackStatus", receiver_index: 2, enabled: false },
  }));
  session.receive("{broken");
  assertEquals(sent, []);
  assertEquals(events, ["track2:false"]);
  assert(session.lastHeardAt >= before);
});

Deno.test("client-message gets server-response or error-response with its id", async () => {
  const { sent, events, session } = harness();
  session.receive(
    JSON.stringify({ label: "rtvi-ai", type: "client-message", id: "a1", data: { t: "hi", d: 1 } }),
  );
  session.receive(
    JSON.stringify({ label: "rtvi-ai", type: "client-message", id: "a2", data: { t: "fail" } }),
  );
  await tick();
  assertEquals(events, ["client-message", "client-message"]);
  sent.sort((a, b) => String(a.id).localeCompare(String(b.id)));
  assertEquals(sent, [
    { label: "rtvi-ai", type: "server-response", id: "a1", data: { t: "hi", d: { ok: "hi" } } },
    { label: "rtvi-ai", type: "error-response", id: "a2", data: { error: "brain is gone" } },
  ]);
});

Deno.test("send-text is a typed turn, ui-event a page message; unknown types get error-response", async () => {
  const { sent, events, session } = harness();
  session.receive(
    JSON.stringify({
      label: "rtvi-ai",
      type: "send-text",
      id: "b1",
      data: { content: "x", options: {} },
    }),
  );
  session.receive(
    JSON.stringify({ label: "rtvi-ai", type: "ui-event", id: "b2", data: { event: "click" } }),
  );
  session.receive(
    JSON.stringify({ label: "rtvi-ai", type: "append-to-context", id: "b3", data: {} }),
  );
  session.receive(JSON.stringify({ label: "rtvi-ai", type: "disconnect-bot", id: "b4", data: {} }));
  await tick();
  assertEquals(events, ["typed x", "ui-event", "disconnect"]);
  assertEquals(sent, [{
    label: "rtvi-ai",
    type: "error-response",
    id: "b3",
    data: { error: "Unsupported type append-to-context" },
  }]);
});

Deno.test("a send-text the call cannot serve is refused with its reason and reaches nobody", async () => {
  const { sent, events, session } = harness();
  const send = (id: string, data: unknown) =>
    session.receive(JSON.stringify({ label: "rtvi-ai", type: "send-text", id, data }));
  send("ok", { content: "  order 42 " }); // the client's sendText("…") with no options
  send("a", { content: "   " });
  send("b", { content: 42, options: {} });
  send("c", "hello");
  send("d", { content: "hi", options: { audio_response: false } });
  send("e", { content: "hi", options: { run_immediately: "yes" } });
  send("f", { content: "not now", options: { run_immediately: true, audio_response: true } });
  await tick();
  assertEquals(events, ["typed order 42"]);
  assertEquals(sent.map((m) => [m.id, (m.data as { error: string }).error]), [
    ["a", "Refused: send-text content is empty."],
    ["b", "Refused: send-text content must be a string."],
    ["c", "Refused: send-text needs an object data with a string content."],
    ["d", "Refused: send-text options.audio_response false is not supported."],
    ["e", "Refused: send-text options.run_immediately must be a boolean."],
    ["f", "Refused: The call has not started."],
  ]);
  assertEquals(sent.every((m) => m.type === "error-response"), true);
  assertEquals(session.counts.refused, 6);
});

// ---- hostile pages (bench/fuzz, tests/hostile_input_rtvi.test.ts) ----

/** A page whose channel refuses messages over 64 KiB by throwing, as werift's send does. */
function strictHarness(limits?: { messagesPerSecond: number; burst: number }) {
  const sent: Record<string, unknown>[] = [];
  const forwarded: unknown[] = [];
  const session = new RtviSession((text) => {
    if (new TextEncoder().encode(text).length > 65536) throw new Error("max-message-size exceeded");
    sent.push(JSON.parse(text));
  }, {
    onPageMessage: (m) => {
      forwarded.push(m.data);
      return { d: (m.data as { echo?: unknown })?.echo };
    },
  }, limits);
  return { sent, forwarded, session };
}

const rtviText = (type: string, data: unknown, id?: string) =>
  JSON.stringify({ label: "rtvi-ai", type, ...(id ? { id } : {}), data });

Deno.test("a message over 64 KiB is not parsed; the page gets a non-fatal error", () => {
  const { sent, forwarded, session } = strictHarness();
  session.receive(rtviText("client-message", { t: "x", d: "y".repeat(70_000) }, "big1"));
  assertEquals(forwarded, []);
  assertEquals(sent.length, 1);
  assertEquals(sent[0].type, "error");
  assertEquals((sent[0].data as { fatal: boolean }).fatal, false);
  assertEquals(session.counts.oversized, 1);
});

Deno.test("an answer too large for the channel becomes an error-response; nothing throws", async () => {
  const { sent, session } = strictHarness();
  // Just under the limit inbound; the server-response echoes `t` inside a longer envelope and
  // goes over it.
  const overhead = rtviText("client-message", { t: "" }, "a1").length;
  const text = rtviText("client-message", { t: "x".repeat(65536 - overhead) }, "a1");
  assertEquals(new TextEncoder().encode(text).length, 65536);
  session.receive(text);
  await tick();
  assertEquals(sent.map((m) => m.type), ["error-response"]);
  assertEquals(sent[0].id, "a1");
  assertEquals(session.counts.outboundDropped, 1);
});

Deno.test("a send that throws does not escape emit() or receive()", () => {
  const session = new RtviSession(() => {
    throw new Error("the channel is closing");
  });
  session.receive(rtviText("client-ready", { version: "2.1.0" }, "r1"));
  assertEquals(session.emit("bot-started-speaking"), false);
  assertEquals(session.counts.outboundDropped, 2);
});

Deno.test("data the session log cannot store is refused with an error-response", async () => {
  const { sent, forwarded, session } = strictHarness();
  session.receive(rtviText("client-message", { t: "a\u0000b" }, "n1"));
  session.receive(rtviText("ui-event", { k: "\ud800" }, "s1"));
  session.receive(
    `{"label":"rtvi-ai","type":"send-text","id":"d1","data":${"[".repeat(100)}${"]".repeat(100)}}`,
  );
  await tick();
  assertEquals(forwarded, []);
  assertEquals(sent.map((m) => `${m.type} ${m.id}`), [
    "error-response n1",
    "error-response s1",
    "error-response d1",
  ]);
  assertEquals(session.counts.refused, 3);
});

Deno.test("a flood is cut at the rate, and the page hears of it at most once a second", async () => {
  const { sent, forwarded, session } = strictHarness({ messagesPerSecond: 20, burst: 60 });
  for (let i = 0; i < 1000; i++) session.receive(rtviText("ui-event", { i }, `f${i}`));
  await tick();
  assert(forwarded.length >= 60 && forwarded.length <= 62, `${forwarded.length} forwarded`);
  assertEquals(sent.filter((m) => m.type === "error").length, 1);
  assert(session.counts.rateLimited >= 938);
});

Deno.test("a handler that throws or rejects is contained: no exception, no unhandled rejection", async () => {
  const sent: string[] = [];
  const session = new RtviSession((t) => sent.push(t), {
    onClientReady: () => Promise.reject(new Error("database away")),
    onDisconnectBot: () => {
      throw new Error("already ending");
    },
    onPageMessage: () => Promise.reject(new Error("brain gone")),
  });
  session.receive(rtviText("client-ready", {}, "r1"));
  session.receive(rtviText("disconnect-bot", {}, "d1"));
  session.receive(rtviText("ui-event", {}, "u1"));
  await tick();
  await tick();
  assertEquals(session.counts.handlerErrors, 3);
});

Deno.test("an id over 128 characters is not echoed back", () => {
  const { sent, session } = strictHarness();
  session.receive(rtviText("client-ready", {}, "i".repeat(129)));
  assertEquals(sent.map((m) => m.type), ["error"]);
  assertEquals(sent[0].id, undefined);
});

Deno.test("an unknown type is quoted at most 64 characters back", () => {
  const { sent, session } = strictHarness();
  session.receive(rtviText("t".repeat(60_000), {}, "u1"));
  assertEquals(sent.length, 1);
  const error = (sent[0].data as { error: string }).error;
  assert(error.length < 100, error);
});

Deno.test("every frame but pings is reported once, with why it was refused, before what it causes", async () => {
  const order: string[] = [];
  const session = new RtviSession((text) => order.push(`sent ${JSON.parse(text).type}`), {
    onFrame: (text, refusal) => order.push(`frame ${text.slice(0, 12)}: ${refusal ?? "taken"}`),
    onPageMessage: () => {
      order.push("page message");
      return {};
    },
    onClientReady: () => order.push("ready"),
  }, { messagesPerSecond: 1, burst: 6 });
  const msg = (type: string, data?: unknown, id?: string) =>
    JSON.stringify({ label: "rtvi-ai", type, id, data });
  session.receive("ping: 1");
  session.receive(msg("client-ready", {}, "r1"));
  session.receive(msg("client-message", { t: "a" }));
  session.receive("x".repeat(70_000));
  session.receive("{not json");
  session.receive(msg("send-text", { content: "a\u0000b" }, "s1"));
  session.receive(msg("what-is-this", {}, "w1"));
  session.receive(msg("client-message", { t: "b" }, "i".repeat(200)));
  session.receive(msg("client-message", { t: "over the rate" }));
  await tick();
  assertEquals(order, [
    'frame {"label":"rt: taken',
    "sent bot-ready",
    "ready",
    'frame {"label":"rt: taken',
    "page message",
    "frame xxxxxxxxxxxx: larger than 65536 bytes",
    "sent error",
    "frame {not json: not JSON",
    'frame {"label":"rt: data.content contains U+0000, which cannot be stored.',
    "sent error-response",
    'frame {"label":"rt: unsupported type',
    "sent error-response",
    'frame {"label":"rt: id longer than 128 characters',
    "sent error",
    'frame {"label":"rt: over 1 messages a second',
    "sent error",
  ]);
});
