// Contract tests of the Sarvam recognition adapter against the fake of Sarvam's realtime
// WebSocket (tests/fakes/sarvam_stt.ts), each step naming the documentation page it checks. What
// every recognition provider owes (audio in, text and usage out, interims, refusals, drops,
// closing) is tests/conformance/stt.ts, run by saaras_passes_the_recognition_conformance_suite.
import { setQuiet } from "../../../common/log.ts";
import { type FakeSarvamSttOptions, startFakeSarvamStt } from "../../../tests/fakes/sarvam_stt.ts";
import { assert, assertEquals, assertMatch } from "../../../tests/helpers/assert.ts";
import { RecognitionError, type RecognitionStream } from "../../stt/engine.ts";
import { SARVAM_STT_LANGUAGES, type SarvamOptions, SarvamRecognitionEngine } from "./stt.ts";

const REFERENCE = "docs.sarvam.ai/api-reference/speech-to-text/transcribe/realtime/ws.md";
const GUIDE = "docs.sarvam.ai/api/api-guides-tutorials/speech-to-text/realtime-streaming";
const LANGUAGES =
  "docs.sarvam.ai/api/api-guides-tutorials/speech-to-text/how-to/specify-language-codes";

setQuiet(true);

function harness(fake: FakeSarvamSttOptions = {}, engine: Partial<SarvamOptions> = {}) {
  const server = startFakeSarvamStt({ apiKey: "test-key", ...fake });
  const stt = new SarvamRecognitionEngine({ apiKey: "test-key", url: server.url, ...engine });
  return {
    fake: server,
    engine: stt,
    async [Symbol.asyncDispose]() {
      await stt.close();
      await server.close();
    },
  };
}

/** `ms` of 16 kHz samples that differ from one another, negatives included. */
function pcm(ms: number): Int16Array {
  return Int16Array.from({ length: ms * 16 }, (_, i) => ((i * 7919) % 65536) - 32768);
}

/** As the worker does: 20 ms frames. */
function speak(stream: RecognitionStream, audio: Int16Array): void {
  for (let i = 0; i < audio.length; i += 320) stream.push(audio.subarray(i, i + 320));
}

async function until(cond: () => boolean, what: string, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection");
}

Deno.test("the stream speaks Sarvam's documented realtime protocol", async (t) => {
  await using h = harness({ transcripts: ["नमस्ते"] });
  const stream = await h.engine.open("LANGUAGE_HI");
  const audio = pcm(250);
  speak(stream, audio);
  await stream.finish();
  const conn = h.fake.received.connections[0];

  await t.step(`path and query (${REFERENCE})`, () => {
    assertEquals(conn.path, "/speech-to-text-realtime/ws");
    assertEquals(conn.query, {
      language_code: "hi-IN",
      model: "saaras:v3-realtime",
      endpointing: "manual", // our VAD ends utterances, not the provider's
      encoding: "linear16",
      sample_rate: "16000",
    });
  });

  await t.step(`the key goes in the API-SUBSCRIPTION-KEY header only (${REFERENCE})`, () => {
    assertEquals(conn.headers["api-subscription-key"], "test-key");
    assert(!JSON.stringify(conn.query).includes("test-key"));
  });

  await t.step(`an utterance is speech_start, audio_input..., speech_end (${REFERENCE})`, () => {
    const events = conn.messages.map((m) => (m as { event: string }).event);
    assertEquals(events, [
      "speech_start",
      "audio_input",
      "audio_input",
      "audio_input",
      "speech_end",
    ]);
    assertEquals(conn.messages[0], { event: "speech_start" });
    assertEquals(conn.messages.at(-1), { event: "speech_end" });
  });

  await t.step(`audio is base64 16-bit little-endian PCM in 100 ms frames (${GUIDE})`, () => {
    const frames = conn.messages.slice(1, -1) as { event: string; audio: string }[];
    for (const f of frames) assertEquals(Object.keys(f).sort(), ["audio", "event"]);
    assertEquals(frames.map((f) => atob(f.audio).length), [3200, 3200, 1600]);
    assertEquals(h.fake.audioOf(conn), audio);
    assertEquals(h.fake.violations, []);
  });

  await t.step(`close() ends the session with the end event (${GUIDE})`, async () => {
    stream.close();
    await until(() => conn.closeCode !== undefined, "the socket to close");
    assertEquals(conn.messages.at(-1), { event: "end" });
  });

  await t.step("the model is configurable", async () => {
    const other = new SarvamRecognitionEngine({
      apiKey: "test-key",
      url: h.fake.url,
      model: "saaras:v4",
    });
    (await other.open("LANGUAGE_TA")).close();
    await other.close();
    assertEquals(h.fake.received.connections[1].query.model, "saaras:v4");
    assertEquals(h.fake.received.connections[1].query.language_code, "ta-IN");
  });
});

Deno.test("partials become interims and finals finish the utterance", async (t) => {
  await t.step(`several utterances on one stream, one socket (${GUIDE})`, async () => {
    await using h = harness({ transcripts: ["first one", "second one", "third one"] });
    const stream = await h.engine.open("LANGUAGE_EN");
    for (const expected of ["first one", "second one", "third one"]) {
      speak(stream, pcm(300));
      assertEquals(await stream.finish(), { text: expected, audioMs: 300 });
    }
    assertEquals(h.fake.received.connections.length, 1);
    assertEquals(h.fake.violations, []);
  });

  await t.step("several finals for one utterance are joined, interims include them", async () => {
    await using h = harness({
      transcripts: [["पहला हिस्सा", "दूसरा हिस्सा"]],
      wordEveryMs: 100,
    });
    const stream = await h.engine.open("LANGUAGE_HI");
    const interims: string[] = [];
    stream.onInterim((text) => interims.push(text));
    speak(stream, pcm(400));
    await until(() => interims.at(-1) === "पहला हिस्सा दूसरा हिस्सा", "the partials");
    assertEquals(interims, ["पहला", "पहला हिस्सा", "पहला हिस्सा दूसरा", "पहला हिस्सा दूसरा हिस्सा"]);
    assertEquals((await stream.finish()).text, "पहला हिस्सा दूसरा हिस्सा");
  });

  await t.step("a Devanagari transcript comes back intact", async () => {
    const said = "नमस्ते, मुझे मदद चाहिए";
    await using h = harness({ transcripts: [said] });
    const stream = await h.engine.open("LANGUAGE_HI");
    speak(stream, pcm(200));
    const { text } = await stream.finish();
    assertEquals(text, said);
    assertEquals([...text].length, [...said].length);
  });

  await t.step("a delayed final is waited for", async () => {
    await using h = harness({ transcripts: ["slow"], finalDelayMs: 300 });
    const stream = await h.engine.open("LANGUAGE_EN");
    speak(stream, pcm(100));
    assertEquals((await stream.finish()).text, "slow");
  });
});

Deno.test("provider faults fail the utterance, not the stream", async (t) => {
  // A refusal at the upgrade (the fake's default) is the conformance suite's; this is the other.
  for (const refuseAuth of ["close"] as const) {
    await t.step(`a wrong key (${refuseAuth} refusal): open() rejects, key unsaid`, async () => {
      await using h = harness({ refuseAuth }, { apiKey: "wrong-key-123" });
      const err = await rejection(h.engine.open("LANGUAGE_HI"));
      assert(err instanceof RecognitionError, String(err));
      assertMatch(err.message, /refused/);
      assert(!err.message.includes("wrong-key-123"), err.message);
      assertEquals(h.fake.received.refused.length, 1);
      assertEquals(h.fake.received.refused[0].headers["api-subscription-key"], "wrong-key-123");
      assertEquals(h.engine.stats().streams, 0);
    });
  }

  await t.step(
    `an error frame rejects finish(); the next utterance reconnects (${GUIDE})`,
    async () => {
      await using h = harness({
        transcripts: ["lost", "found"],
        faults: [{ utterance: 0, kind: "error", code: "processing_error", message: "boom" }],
      });
      const stream = await h.engine.open("LANGUAGE_EN");
      speak(stream, pcm(300));
      const err = await rejection(stream.finish());
      assert(err instanceof RecognitionError);
      assertMatch(err.message, /processing_error: boom/);
      speak(stream, pcm(300));
      assertEquals((await stream.finish()).text, "found");
      assertEquals(h.fake.received.connections.length, 2);
      assertEquals(h.engine.stats().reconnects, 1);
      assertEquals(h.engine.stats().providerErrors, 1);
    },
  );

  await t.step(`a non-fatal error frame does not fail the utterance (${GUIDE})`, async () => {
    await using h = harness({
      transcripts: ["still fine"],
      faults: [{ utterance: 0, kind: "error", afterMs: 100, isFatal: false }],
    });
    const stream = await h.engine.open("LANGUAGE_EN");
    speak(stream, pcm(300));
    assertEquals((await stream.finish()).text, "still fine");
  });

  await t.step("an outage between utterances: the next one reconnects", async () => {
    await using h = harness({ transcripts: ["before", "after"] });
    const stream = await h.engine.open("LANGUAGE_EN");
    speak(stream, pcm(200));
    assertEquals((await stream.finish()).text, "before");
    h.fake.dropAll();
    await until(() => h.fake.received.connections[0].closeCode !== undefined, "the outage");
    speak(stream, pcm(200));
    assertEquals((await stream.finish()).text, "after");
  });

  await t.step(
    "a hung provider: finish() rejects after finalTimeoutMs, then starts afresh",
    async () => {
      await using h = harness(
        { transcripts: ["never", "next"], faults: [{ utterance: 0, kind: "hang" }] },
        { finalTimeoutMs: 300 },
      );
      const stream = await h.engine.open("LANGUAGE_EN");
      speak(stream, pcm(200));
      const started = Date.now();
      const err = await rejection(stream.finish());
      assertMatch(err.message, /no final transcript from Sarvam within 300 ms/);
      assert(Date.now() - started < 1000);
      speak(stream, pcm(200));
      assertEquals((await stream.finish()).text, "next");
      assertEquals(h.fake.received.connections.length, 2); // a late final cannot land on "next"
      assertEquals(h.engine.stats().finalTimeouts, 1);
    },
  );

  await t.step("a server that never begins the session: open() times out", async () => {
    const silent = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
      const { response, socket } = Deno.upgradeWebSocket(req);
      socket.onmessage = () => {};
      return response;
    });
    const engine = new SarvamRecognitionEngine({
      apiKey: "test-key",
      url: `ws://127.0.0.1:${silent.addr.port}`,
      connectTimeoutMs: 200,
    });
    const err = await rejection(engine.open("LANGUAGE_EN"));
    assertMatch(err.message, /did not begin a session within 200 ms/);
    await engine.close();
    await silent.shutdown();
  });

  await t.step("audio beyond the socket's bound is dropped and counted", async () => {
    await using h = harness({ transcripts: ["flood"] }, { maxBufferedMs: 200 });
    const stream = await h.engine.open("LANGUAGE_EN");
    stream.push(pcm(5000)); // all at once: nothing drains in between
    assertEquals(await stream.finish(), { text: "flood", audioMs: 5000 });
    const dropped = h.engine.stats().droppedAudioMs;
    assert(dropped >= 4000, `dropped ${dropped} ms`);
    const sent = h.fake.received.connections[0].audioBytes / 32;
    assertEquals(sent + dropped, 5000);
  });
});

Deno.test(`languages: the roster's 22 Indic languages and English (${LANGUAGES})`, async (t) => {
  await t.step("every language of the proto roster is served", async () => {
    const proto = await Deno.readTextFile(
      new URL("../../../proto/voice/v1/config.proto", import.meta.url),
    );
    const roster = [...proto.matchAll(/\b(LANGUAGE_[A-Z]+) = [1-9]/g)].map((m) => m[1]);
    assertEquals(roster.length, 23);
    assertEquals([...SARVAM_STT_LANGUAGES].sort(), roster.sort());
  });
});
