// The page's own latency figure is a client-message with the reserved t "client-latency": it is
// checked (a number from 0 to 60000 ms, an optional short turn id), handed to onClientLatency
// and answered; a bad one is refused; neither ever reaches onPageMessage (the brain).
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type ClientLatency, readClientLatency } from "./protocol.ts";
import { RtviSession } from "./session.ts";

const tick = () => new Promise((r) => setTimeout(r, 0));

function harness(keep = true) {
  const sent: Record<string, unknown>[] = [];
  const forwarded: unknown[] = [];
  const kept: ClientLatency[] = [];
  const session = new RtviSession((text) => sent.push(JSON.parse(text)), {
    onPageMessage: (m) => void forwarded.push(m.data),
    onClientLatency: (l) => (kept.push(l), keep),
  });
  const send = (d: unknown, id?: string) =>
    session.receive(JSON.stringify({
      label: "rtvi-ai",
      type: "client-message",
      ...(id ? { id } : {}),
      data: { t: "client-latency", d },
    }));
  return { sent, forwarded, kept, session, send };
}

Deno.test("a valid client-latency is kept and answered, not forwarded", async () => {
  const h = harness();
  h.send({ end_of_speech_to_audio_ms: 482.5 }, "a1");
  h.send({ turn_id: "t3", end_of_speech_to_audio_ms: 0 });
  await tick();
  assertEquals(h.kept, [{ end_of_speech_to_audio_ms: 482.5 }, {
    turn_id: "t3",
    end_of_speech_to_audio_ms: 0,
  }]);
  assertEquals(h.forwarded, []);
  assertEquals(h.sent, [{
    label: "rtvi-ai",
    type: "server-response",
    id: "a1",
    data: { t: "client-latency", d: { recorded: true } },
  }]);
});

Deno.test("a figure the worker does not keep is answered recorded: false", async () => {
  const h = harness(false);
  h.send({ end_of_speech_to_audio_ms: 300 }, "a2");
  await tick();
  assertEquals((h.sent[0].data as { d: unknown }).d, { recorded: false });
  assertEquals(h.forwarded, []);
});

Deno.test("bad client-latency values are refused and never forwarded", async () => {
  const h = harness();
  const bad: unknown[] = [
    undefined,
    null,
    "450",
    [450],
    {},
    { end_of_speech_to_audio_ms: -1 },
    { end_of_speech_to_audio_ms: 60_001 },
    { end_of_speech_to_audio_ms: "450" },
    { end_of_speech_to_audio_ms: 1e308 * 10 }, // Infinity: JSON writes null
    { end_of_speech_to_audio_ms: 450, turn_id: 7 },
    { end_of_speech_to_audio_ms: 450, turn_id: "" },
    { end_of_speech_to_audio_ms: 450, turn_id: "x".repeat(129) },
  ];
  bad.forEach((d, i) => h.send(d, `b${i}`));
  await tick();
  assertEquals(h.kept, []);
  assertEquals(h.forwarded, []);
  assertEquals(h.session.counts.refused, bad.length);
  assertEquals(h.sent.length, bad.length);
  for (const m of h.sent) assertEquals(m.type, "error-response");
  assertEquals(readClientLatency({ end_of_speech_to_audio_ms: NaN }), {
    problem: "end_of_speech_to_audio_ms must be a number from 0 to 60000",
  });
});

Deno.test("without a handler the figure is dropped, still not forwarded", async () => {
  const sent: Record<string, unknown>[] = [];
  const forwarded: unknown[] = [];
  const session = new RtviSession((text) => sent.push(JSON.parse(text)), {
    onPageMessage: (m) => void forwarded.push(m),
  });
  session.receive(JSON.stringify({
    label: "rtvi-ai",
    type: "client-message",
    id: "c1",
    data: { t: "client-latency", d: { end_of_speech_to_audio_ms: 400 } },
  }));
  // Other client messages still go to the brain.
  session.receive(JSON.stringify({
    label: "rtvi-ai",
    type: "client-message",
    id: "c2",
    data: { t: "client-latency-ish", d: { end_of_speech_to_audio_ms: 400 } },
  }));
  await tick();
  assertEquals(forwarded.length, 1);
  assertEquals((sent[0].data as { d: unknown }).d, { recorded: false });
});
