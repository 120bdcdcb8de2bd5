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

Deno.test("send-text and ui-event reach the page handler; unknown types get error-response", async () => {
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
  assertEquals(events, ["send-text", "ui-event", "disconnect"]);
  assertEquals(sent, [{
    label: "rtvi-ai",
    type: "error-response",
    id: "b3",
    data: { error: "Unsupported type append-to-context" },
  }]);
});
