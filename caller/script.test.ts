import assert from "node:assert/strict";
import { EspeakEngine } from "../media/tts/espeak_engine.ts";
import { UnservedError } from "../media/tts/engine.ts";
import { parseScript, prepareTurns, speechEndMs, withNoise } from "./script.ts";
import { parseNoise } from "./noise.ts";
import { encodeWav, rms } from "./wav.ts";

Deno.test("a script has one turn per line and skips blank lines and # comment lines", () => {
  const turns = parseScript(
    "# greeting check\n\nhello there\r\n   # indented comment\n  press # then one  \nbye\n",
  );
  assert.deepEqual(turns, [
    { kind: "text", text: "hello there" },
    { kind: "text", text: "press # then one" },
    { kind: "text", text: "bye" },
  ]);
});

Deno.test("the end of speech is the last loud sample, not the end of trailing silence", () => {
  const pcm = new Int16Array(48000); // 1 s
  for (let i = 0; i < 24000; i++) pcm[i] = i % 2 ? 4000 : -4000; // 0.5 s of sound
  assert.equal(speechEndMs(pcm), 500);
  assert.equal(speechEndMs(new Int16Array(960)), 0);
});

Deno.test("a WAV turn at 16 kHz becomes 48 kHz audio labelled with its file and length", async () => {
  const dir = await Deno.makeTempDir({ prefix: "script-test-" });
  try {
    const samples = new Int16Array(16000 * 2); // 2 s of a 440 Hz tone
    for (let i = 0; i < samples.length; i++) {
      samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000));
    }
    const path = `${dir}/turn.wav`;
    await Deno.writeFile(path, encodeWav({ sampleRate: 16000, samples }));
    const [turn] = await prepareTurns([{ kind: "wav", path }], {
      voice: "VOICE_ARJUN",
      language: "LANGUAGE_EN",
    }, () => {
      throw new Error("no engine is needed for WAV turns");
    });
    assert.equal(turn.pcm.length, 48000 * 2);
    assert.equal(turn.label, `[${path}, 2.0 s]`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("text turns are spoken by the local synthesis engine as 48 kHz speech", async () => {
  const [turn] = await prepareTurns([{ kind: "text", text: "what is the weather like today" }], {
    voice: "VOICE_ARJUN",
    language: "LANGUAGE_EN",
  });
  assert.equal(turn.label, "what is the weather like today");
  const seconds = turn.pcm.length / 48000;
  assert.ok(seconds > 1 && seconds < 5, `${seconds} s of speech`);
  assert.ok(rms(turn.pcm) > 500, `speech RMS ${rms(turn.pcm)}`);
  assert.ok(speechEndMs(turn.pcm) > 1000);
});

Deno.test("a language the engine does not serve fails before any call is made", async () => {
  let made: EspeakEngine | undefined;
  await assert.rejects(
    prepareTurns([{ kind: "text", text: "hello" }], {
      voice: "VOICE_ARJUN",
      language: "LANGUAGE_XX",
    }, () => made = new EspeakEngine()),
    UnservedError,
  );
  // The engine prepareTurns started is closed again: a new synthesis on it fails at once.
  assert.throws(
    () => made!.synthesize("x", { voice: "VOICE_ARJUN", language: "LANGUAGE_EN" }),
    /closed/,
  );
});

Deno.test("noise mixed under a turn leaves its speech end where the clean speech ends", () => {
  const pcm = new Int16Array(48000); // 0.5 s of sound, then 0.5 s of silence
  for (let i = 0; i < 24000; i++) pcm[i] = i % 2 ? 4000 : -4000;
  for (const kind of ["white", "pink", "brown"] as const) {
    const turn = withNoise({ label: "x", pcm }, { kind, db: -20, tailMs: 2000 });
    assert.equal(turn.speechEnd, 24000);
    assert.equal(turn.pcm.length, 48000 * 3);
    // The noise is 20 dB below the speech (RMS 4000), and there after the speech ends.
    const level = rms(turn.pcm, 48000, 48000 * 3);
    assert.ok(level > 300 && level < 500, `${kind}: ${level}`);
  }
});

Deno.test("a noise option reads as KIND[:DB[:TAIL_SECONDS]] and is refused otherwise", () => {
  assert.deepEqual(parseNoise("brown:-20:6"), { kind: "brown", db: -20, tailMs: 6000 });
  assert.deepEqual(parseNoise("pink"), { kind: "pink", db: -20, tailMs: 1000 });
  assert.throws(() => parseNoise("purple"), /white, pink, brown/);
  assert.throws(() => parseNoise("white:loud"), /not a dB figure/);
  assert.throws(() => parseNoise("white:-10:99"), /0 to 60 seconds/);
});
