// A worker whose Sarvam key is refused (both fakes answer HTTP 403): its breakers open at start,
// so Bulbul and Saaras are asked only by their probes, once per cool-down, never per unit; the
// node no longer advertises Hindi recognition (only Saaras recognises Hindi here), so connect
// refuses a Hindi call with 400 unsupported_config naming the field instead of starting a call
// that would fail at its greeting; an English call is served by the local engines. Once the fakes
// accept the key, the next probe closes the breakers and Hindi is served again, through Sarvam.
import { assert, assertEquals } from "./helpers/assert.ts";
import { eventually, speech, startCallService, waitForLog } from "./helpers/call_harness.ts";
import { freePort } from "./helpers/process.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { startFakeSarvamStt } from "./fakes/sarvam_stt.ts";
import { startFakeSarvamTts } from "./fakes/sarvam_tts.ts";

const COOL_DOWN_MS = 2000;
const HINDI = {
  tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" },
  stt: { language: "LANGUAGE_HI" },
};
const REPLY = ["One.", "Two.", "Three.", "Four.", "Five."];

/** The gaps between consecutive request times. */
const gaps = (at: number[]) => at.slice(1).map((t, i) => t - at[i]);

Deno.test("a refused provider key takes its engines out of routing and capabilities until a probe is accepted", async () => {
  // The fakes want "right-key"; the worker has "wrong-key".
  const stt = startFakeSarvamStt({ apiKey: "right-key", transcripts: ["मुझे मदद चाहिए"] });
  const tts = startFakeSarvamTts({ apiKey: "right-key" });
  const turns: string[] = [];
  const brain = createBrain({
    onSessionStart: () => "Hello.",
    async *onTurn(turn) {
      turns.push(turn.text);
      for (const unit of REPLY) yield unit; // a unit each: each would have asked Bulbul
    },
  });
  const metricsPort = freePort();
  const service = await startCallService(brain, {
    workerEnv: {
      SARVAM_API_KEY: "wrong-key",
      SPEECH_ENGINE_COOL_DOWN_SECONDS: String(COOL_DOWN_MS / 1000),
      METRICS_PORT: String(metricsPort),
      SPEECH_ENGINES: JSON.stringify({
        options: { "sarvam-saaras": { url: stt.url }, "sarvam-bulbul": { url: tts.url } },
      }),
    },
  });
  const capabilities = async () =>
    await (await fetch(`${service.api.url}/api/v1/capabilities`)).json();
  const engineDown = async (engine: string, leg: string) => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const line = text.split("\n").find((l) =>
      l.startsWith(`voice_speech_engine_down{engine="${engine}",leg="${leg}"}`)
    );
    return line?.split(" ").at(-1);
  };
  try {
    // (b) The node registered without Hindi recognition; Hindi synthesis is espeak-ng's.
    const caps = await capabilities();
    assert(!caps.stt_languages.includes("LANGUAGE_HI"), JSON.stringify(caps.stt_languages));
    assertEquals(caps.languages.LANGUAGE_HI.tts.VOICE_ANANYA, [
      { engine: "espeak-ng", kind: "local" },
    ]);
    assertEquals(await engineDown("sarvam-bulbul", "synthesis"), "1");
    assertEquals(await engineDown("sarvam-saaras", "recognition"), "1");
    const [{ n: before }] = await service.api.db.sql`select count(*)::int as n from sessions`;
    const refused = await service.api.post(
      "/api/v1/sessions.connect",
      { agent_id: service.tenant.agent_id, config: HINDI },
      service.tenant.sk,
    );
    assertEquals(refused.status, 400, JSON.stringify(refused.body));
    assertEquals(refused.body.error.code, "unsupported_config");
    assertEquals(refused.body.error.details.field, "config.stt.language");
    const [{ n: after }] = await service.api.db.sql`select count(*)::int as n from sessions`;
    assertEquals(after, before, "a refused connect changes nothing");

    // (a) An English call of six units: the local engines speak and hear it; Bulbul and Saaras
    // are asked by their probes only, at most once per cool-down.
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await caller.say(await speech("tell me the numbers"));
    // Every unit heard: the greeting and the reply's five.
    await eventually(
      async () =>
        (await service.log(sessionId)).filter((e) => e.source === "to_brain" && e.kind === "heard")
          .length >= 1 + REPLY.length,
      "every unit heard",
      30_000,
    );
    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    const units = record.timings.turns.flatMap((t: { units: { engine: string }[] }) => t.units);
    assert(units.length >= 1 + REPLY.length, `${units.length} units`);
    assertEquals([...new Set(units.map((u: { engine: string }) => u.engine))], ["espeak-ng"]);
    assertEquals(turns.length, 1);
    const ttsAsked = tts.received.map((c) => c.at);
    const sttAsked = stt.received.refused.map((r) => r.at);
    const span = Date.now() - ttsAsked[0];
    assert(
      ttsAsked.length <= 1 + Math.floor(span / COOL_DOWN_MS),
      `Bulbul asked ${ttsAsked.length} times in ${span} ms for ${units.length} units`,
    );
    for (const [name, at] of [["Bulbul", ttsAsked], ["Saaras", sttAsked]] as const) {
      const tooSoon = gaps(at).filter((g) => g < COOL_DOWN_MS * 0.9);
      assertEquals(tooSoon, [], `${name} asked again within a cool-down: ${gaps(at)}`);
    }
    assertEquals(tts.received.every((c) => c.messages.length === 0), true);
    assertEquals(stt.received.connections.length, 0);

    // (c) The key is accepted again: the next probe closes both breakers, Hindi is served.
    stt.acceptKey("wrong-key");
    tts.options.apiKey = "wrong-key";
    const until = Date.now() + COOL_DOWN_MS * 3 + 5000;
    while (!(await capabilities()).stt_languages.includes("LANGUAGE_HI")) {
      assert(
        Date.now() < until,
        `Hindi recognition never came back\n${service.worker.child.output()}`,
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(await engineDown("sarvam-bulbul", "synthesis"), "0");
    assertEquals(await engineDown("sarvam-saaras", "recognition"), "0");
    const hindi = await service.call({ config: HINDI });
    await hindi.caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await hindi.caller.say(await speech("I need help"));
    const userTurn = await waitForLog(
      service,
      hindi.sessionId,
      (e) => e.source === "to_brain" && e.kind === "user_turn",
    );
    assertEquals(userTurn.data.text, "मुझे मदद चाहिए");
    await hindi.caller.waitForMessage((m) => m.type === "bot-started-speaking", 10_000);
    await hindi.caller.hangUp();
    const spoken = await service.record(hindi.sessionId, "ended");
    const greeting = spoken.timings.turns[0];
    assertEquals(greeting.units[0].engine, "sarvam-bulbul");
    const t1 = spoken.timings.turns.find((t: { turn_id: string }) => t.turn_id === "t1");
    assertEquals(t1.engines.recognition, "sarvam-saaras");
  } finally {
    await service.close();
    await stt.close();
    await tts.close();
  }
});
