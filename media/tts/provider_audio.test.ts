import assert from "node:assert/strict";
import { resample } from "../../wasm/resampler.ts";
import { wavHeader } from "../../tests/fakes/indic_parler.ts";
import { fakeSpeech, pcmBase64 } from "../../tests/fakes/sarvam_tts.ts";
import {
  AudioFormatError,
  decodeBase64,
  PcmDecoder,
  textParts,
  withSpeakers,
} from "./provider_audio.ts";

function le16(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length * 2);
  const v = new DataView(out.buffer);
  samples.forEach((s, i) => v.setInt16(2 * i, s, true));
  return out;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Decodes `bytes` pushed in pieces of the given sizes (cycled). */
function decode(
  bytes: Uint8Array,
  sizes: number[],
  options: ConstructorParameters<typeof PcmDecoder>[0],
) {
  const d = new PcmDecoder(options);
  try {
    const out: Int16Array[] = [];
    for (let at = 0, i = 0; at < bytes.length; i++) {
      const n = sizes[i % sizes.length];
      out.push(d.push(bytes.subarray(at, at + n)));
      at += n;
    }
    out.push(d.end());
    return { pcm: concat(out), rate: d.rate, ms: d.durationMs, samples: d.samples };
  } finally {
    d.close();
  }
}

for (const rate of [22050, 24000, 44100, 16000, 48000]) {
  Deno.test(`a ${rate} Hz WAV in odd pieces is the whole file resampled to 48 kHz`, () => {
    const audio = fakeSpeech("नमस्ते, आज मौसम बहुत अच्छा है।", rate, 60);
    const file = new Uint8Array([...wavHeader(rate, audio.length), ...le16(audio)]);
    const { pcm, rate: seen, ms, samples } = decode(file, [7, 1, 333, 2, 4096], {
      wav: "required",
    });
    assert.equal(seen, rate);
    const whole = rate === 48000 ? audio : resample(audio, rate, 48000);
    assert.equal(pcm.length, whole.length);
    assert.equal(samples, pcm.length);
    assert.ok(Math.abs(ms - (audio.length * 1000) / rate) < 0.05, `${ms} ms`);
    let worst = 0;
    for (let i = 0; i < pcm.length; i++) worst = Math.max(worst, Math.abs(pcm[i] - whole[i]));
    assert.ok(worst <= 2, `differs by ${worst}`);
  });
}

Deno.test("raw PCM at a given rate; a RIFF header is noticed in auto mode", () => {
  const audio = fakeSpeech("hello there", 24000, 50);
  const raw = decode(le16(audio), [3, 1000], { rate: 24000, wav: "auto" });
  assert.equal(raw.pcm.length, Math.round(audio.length * 2));
  const file = new Uint8Array([...wavHeader(16000, audio.length), ...le16(audio)]);
  const wav = decode(file, [5], { rate: 24000, wav: "auto" });
  assert.equal(wav.rate, 16000); // the header's rate wins
  assert.equal(wav.pcm.length, audio.length * 3);
});

Deno.test("a streamed WAV with an unknown data size is read to its end", () => {
  const audio = fakeSpeech("one two three", 44100, 40);
  const head = wavHeader(44100, 0);
  new DataView(head.buffer).setUint32(40, 0xffffffff, true);
  const { pcm } = decode(new Uint8Array([...head, ...le16(audio)]), [100], { wav: "required" });
  assert.equal(pcm.length, Math.round((audio.length * 48000) / 44100));
});

Deno.test("bytes after a sized data chunk (a trailing LIST) are not audio", () => {
  const audio = new Int16Array(4410).fill(1000);
  const trailer = new TextEncoder().encode("LIST\x04\x00\x00\x00abcd");
  const file = new Uint8Array([...wavHeader(44100, audio.length), ...le16(audio), ...trailer]);
  const { pcm } = decode(file, [64], { wav: "required" });
  assert.equal(pcm.length, 4800);
});

Deno.test("not PCM16 mono, or not a WAV at all, is an AudioFormatError", () => {
  const stereo = wavHeader(24000, 10);
  new DataView(stereo.buffer).setUint16(22, 2, true);
  assert.throws(() => decode(stereo, [44], { wav: "required" }), AudioFormatError);
  const float = wavHeader(24000, 10);
  new DataView(float.buffer).setUint16(34, 32, true);
  assert.throws(() => decode(float, [44], { wav: "required" }), AudioFormatError);
  const mp3 = new TextEncoder().encode("ID3\x03\x00 not a wav at all");
  assert.throws(() => decode(mp3, [100], { wav: "required" }), /not a RIFF\/WAVE stream/);
  assert.throws(
    () => decode(wavHeader(24000, 0).subarray(0, 30), [8], { wav: "required" }),
    /ended in its header/,
  );
  assert.throws(() => decode(new Uint8Array(0), [1], { wav: "required" }), /before any audio/);
});

Deno.test("nothing in raw mode is no audio", () => {
  const { pcm } = decode(new Uint8Array(0), [1], { rate: 24000, wav: "auto" });
  assert.equal(pcm.length, 0);
});

Deno.test("base64 round trip; garbage is an AudioFormatError", () => {
  const audio = fakeSpeech("abc def", 8000, 30);
  assert.deepEqual(decodeBase64(pcmBase64(audio)), le16(audio));
  assert.throws(() => decodeBase64("@@not base64@@"), AudioFormatError);
});

Deno.test("text parts: whole sentences packed under the limit, covering the text", () => {
  const text = "आज मौसम बहुत अच्छा है। हम सब बाहर घूमने जा रहे हैं। शाम को बारिश हो सकती है। कल मिलेंगे।";
  const parts = textParts(text, 50);
  assert.ok(parts.length > 1);
  assert.equal(parts[0].start, 0);
  assert.equal(parts.at(-1)!.end, text.length);
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i];
    if (i > 0) assert.equal(p.start, parts[i - 1].end);
    assert.ok(p.end - p.start <= 50);
    assert.ok(text.slice(p.start, p.end).trimEnd().endsWith("।"));
  }
  assert.deepEqual(textParts("short", 50), [{ start: 0, end: 5 }]);
});

Deno.test("text parts: a long sentence is cut after spaces, a long word between graphemes", () => {
  const sentence = "एक दो तीन चार पाँच छह सात आठ नौ दस ग्यारह बारह तेरह चौदह";
  for (const p of textParts(sentence, 12)) {
    const s = sentence.slice(p.start, p.end);
    assert.ok(s.length <= 12, s);
    assert.ok(p.end === sentence.length || s.endsWith(" "), `"${s}" is cut inside a word`);
  }
  const word = "स्त्री".repeat(6);
  const ends = new Set(
    [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(word)]
      .map((g) => g.index + g.segment.length),
  );
  for (const p of textParts(word, 8)) assert.ok(ends.has(p.end), "cut inside a grapheme");
});

Deno.test("speaker overrides lay over the catalog, for allowed languages only", () => {
  const base = { LANGUAGE_HI: { VOICE_ANANYA: "a", VOICE_ARJUN: "b" } };
  const allowed = (l: string) => l === "LANGUAGE_HI" || l === "LANGUAGE_PA";
  assert.deepEqual(
    withSpeakers(
      base,
      { LANGUAGE_HI: { VOICE_ARJUN: "c" }, LANGUAGE_PA: { VOICE_ANANYA: "d" } },
      allowed,
    ),
    { LANGUAGE_HI: { VOICE_ANANYA: "a", VOICE_ARJUN: "c" }, LANGUAGE_PA: { VOICE_ANANYA: "d" } },
  );
  assert.deepEqual(base.LANGUAGE_HI.VOICE_ARJUN, "b"); // not changed in place
  assert.throws(
    () => withSpeakers(base, { LANGUAGE_KS: { VOICE_ARJUN: "x" } }, allowed),
    RangeError,
  );
  assert.throws(
    () => withSpeakers(base, { LANGUAGE_HI: { VOICE_ARJUN: "" } }, allowed),
    RangeError,
  );
});
