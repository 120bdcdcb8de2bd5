// Speech fixtures made on this machine: espeak-ng or festival speaks, sox converts to 16-bit
// mono; throughOpus gives them the browser's path.
import { OpusDecoder, OpusEncoder } from "../../wasm/opus.ts";

const cache = new Map<string, string>();

async function run(cmd: string, args: string[]) {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * `raw` as 16-bit mono at `rate`, with `padSeconds` of silence around, in `out`. Without dither
 * (`-D`): sox dithers a resampled 16-bit output with fresh noise each run, which made the same
 * sentence a different fixture each time and recognition tests near their bounds flaky.
 */
function toMono16(raw: string, out: string, rate: number, padSeconds: number) {
  const pad = String(padSeconds);
  return run("sox", ["-D", raw, "-r", String(rate), "-c", "1", "-b", "16", out, "pad", pad, pad]);
}

/** A WAV of `text` spoken by espeak-ng, at 48 kHz mono, with `padSeconds` of silence around. */
export async function speechWav(text: string, padSeconds = 0.3, rate = 48000): Promise<string> {
  const key = `${text}|${padSeconds}|${rate}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const dir = await Deno.makeTempDir({ prefix: "speech-" });
  const raw = `${dir}/raw.wav`, out = `${dir}/speech.wav`;
  await run("espeak-ng", ["-v", "en-us", "-s", "150", "-w", raw, text]);
  await toMono16(raw, out, rate, padSeconds);
  cache.set(key, out);
  return out;
}

const festivalCache = new Map<string, string>();

/**
 * A WAV of `text` spoken by festival's diphone voice, at 48 kHz mono, with `padSeconds` of
 * silence around. The test callers speak with it: pocketsphinx's en-us model hears it far
 * better than espeak-ng's formant voice (5 % against 65 % word error rate, media/stt/README.md).
 */
export async function callerSpeechWav(
  text: string,
  padSeconds = 0.3,
  rate = 48000,
): Promise<string> {
  const key = `${text}|${padSeconds}|${rate}`;
  const hit = festivalCache.get(key);
  if (hit) return hit;
  const dir = await Deno.makeTempDir({ prefix: "caller-speech-" });
  const txt = `${dir}/text.txt`, raw = `${dir}/raw.wav`, out = `${dir}/speech.wav`;
  await Deno.writeTextFile(txt, text);
  await run("text2wave", ["-o", raw, txt]);
  await toMono16(raw, out, rate, padSeconds);
  festivalCache.set(key, out);
  return out;
}

/** Through the browser path: Opus-encoded at 48 kHz in 20 ms frames, decoded at 16 kHz. */
export function throughOpus(pcm48k: Int16Array): Int16Array {
  const enc = new OpusEncoder(), dec = new OpusDecoder({ sampleRate: 16000 });
  const frames = Math.ceil(pcm48k.length / 960);
  const out = new Int16Array(frames * 320);
  const frame = new Int16Array(960);
  for (let f = 0; f < frames; f++) {
    frame.fill(0);
    frame.set(pcm48k.subarray(f * 960, (f + 1) * 960));
    out.set(dec.decode(enc.encode(frame)), f * 320);
  }
  enc.close();
  dec.close();
  return out;
}
