// The labelled set for answering machine detection (media/phone/machine_detection.ts): what a
// dialled call hears after the answer, made on this machine. Machines: voicemail greetings spoken
// by festival and espeak-ng (several voices and rates), most followed by a beep made with sox;
// people: short openings, silence, sometimes a second short utterance. Each clip is band-limited
// to the phone band at 8 kHz, gets white line noise at a known SNR, and goes through G.711 μ-law
// with the project's codec (encode + decode), as a trunk delivers it.
//
// Clips are cached as WAVs under test-artifacts/amd/ (gitignored), named by a hash of their
// recipe, so a rerun only reads them. `deno run -A bench/amd/labelled_set.ts` makes the set and
// prints it.
import { encodeWav, readWav } from "../../caller/wav.ts";
import { g711Decode, g711Encode } from "../../media/phone/g711.ts";

export type Label = "human" | "machine";

export interface Voice {
  engine: "festival" | "espeak";
  /** espeak-ng: voice with variant (en-us+m3); festival: its default diphone voice. */
  name: string;
  /** espeak-ng words per minute; festival: Duration_Stretch (1 = its own pace). */
  rate: number;
  /** espeak-ng pitch 0-99. */
  pitch?: number;
}

export interface Recipe {
  label: Label;
  text: string;
  voice: Voice;
  /** Silence from the answer to the first word, ms. */
  leadMs: number;
  /** People: a second utterance after the first, with the silence before it. */
  second?: { text: string; gapMs: number };
  /** Machines: a beep after the greeting (sox synth sine). */
  beep?: { hz: number; ms: number; gapMs: number };
  /** Silence after the last sound, ms. */
  tailMs: number;
  /** Line noise against the speech's active level, dB. */
  snrDb: number;
  seed: number;
  /** In the held-out part (absent, not false, so the tuning part's hashes stay). */
  heldOut?: true;
}

export interface Clip {
  id: string;
  recipe: Recipe;
  path: string;
  /** Where the first utterance starts and ends, and the beep (ms after the answer). */
  speechStartMs: number;
  speechEndMs: number;
  beepStartMs?: number;
  beepEndMs?: number;
  durationMs: number;
}

const RATE = 8000;
/** Bumped when the way clips are made changes, so old cached files are not reused. */
const GENERATOR = 1;
const ROOT = new URL("../../", import.meta.url).pathname;
export const SET_DIR = `${ROOT}test-artifacts/amd`;

/** Voicemail greetings: different lengths, the carrier's and a person's own. */
export const MACHINE_TEXTS = [
  "Hi, you've reached Priya. I can't take your call right now, please leave a message after the tone.",
  "The person you are calling is not available. Please leave your message after the beep.",
  "Hello, this is Daniel. Leave a message.",
  "You have reached the voicemail of 0 2 0, 7 9 4 6, 0 0 1 8. Please record your message after the tone. When you have finished, you may hang up.",
  "Hi! Sorry I missed you. Leave your name and number and I'll call you back.",
  "Thank you for calling Green Leaf Dental. Our office is now closed. Our hours are nine to five, Monday to Friday.",
  "Hey, it's Sam, leave a message.",
];

/**
 * How people answer: short, then they wait. The last is the detector's known blind spot, kept to
 * measure it: a person (a receptionist) who answers with a whole sentence.
 */
export const HUMAN_TEXTS = [
  "Hello?",
  "Yes?",
  "Hello, who is this?",
  "Speaking.",
  "Hi, this is Anna.",
  "Hello, good morning.",
  "Good afternoon, Johnson and Partners, Maria speaking, how can I help you?",
];
const SECOND_TEXTS = ["Hello?", "Anyone there?", "Hello, can you hear me?"];
/** Hindi: "Haan, bolo?" ("yes, go on?"), spoken by espeak-ng's hi voice. */
const HINDI = { text: "हाँ, बोलो?", voice: { engine: "espeak", name: "hi", rate: 165 } as Voice };

export const VOICES: Voice[] = [
  { engine: "festival", name: "kal", rate: 1 },
  { engine: "festival", name: "kal", rate: 1.15 },
  { engine: "espeak", name: "en-us+m3", rate: 165, pitch: 45 },
  { engine: "espeak", name: "en-gb+f3", rate: 180, pitch: 60 },
  { engine: "espeak", name: "en-us+f2", rate: 150, pitch: 70 },
];

const BEEPS = [
  { hz: 1000, ms: 300 },
  { hz: 440, ms: 500 },
  { hz: 850, ms: 200 },
];
const SNRS = [30, 20, 15];

/** A small seeded generator (mulberry32), so a recipe always makes the same clip. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Held out: wordings, openings and voices no threshold was chosen on (added after the defaults
 * were set on the set above), so their figures say how the rules carry to speech they were not
 * fitted to.
 */
export const HELD_MACHINE_TEXTS = [
  "Hi, you have reached the Kumar family. We're not home right now. Please leave a message and we'll get back to you.",
  "Please leave a message for extension two zero four.",
  "This is Olivia. I'm away from my desk until Monday. For anything urgent, please call the front office.",
  "You've reached Tom's phone. Leave a message.",
];
export const HELD_HUMAN_TEXTS = ["Hello, yes?", "Who's calling?", "Hi, Mike here.", "Hello?"];
export const HELD_VOICES: Voice[] = [
  { engine: "festival", name: "kal", rate: 0.9 },
  { engine: "espeak", name: "en-us+m7", rate: 190, pitch: 35 },
  { engine: "espeak", name: "en-gb+f4", rate: 160, pitch: 55 },
];

/** Every machine wording and human opening in every voice (heldOut marks the held-out part). */
function build(
  machineTexts: string[],
  humanTexts: string[],
  voices: Voice[],
  extraHumans: [string, Voice][],
  firstSeed: number,
  heldOut?: true,
): Recipe[] {
  const out: Recipe[] = [];
  let seed = firstSeed;
  const pick = <T>(r: () => number, xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  machineTexts.forEach((text, t) =>
    voices.forEach((voice, v) => {
      const r = rng(seed);
      // Two clips in three end with a beep; the rest go quiet (a machine that records silently).
      const withBeep = (t + v) % 3 !== 2;
      out.push({
        label: "machine",
        text,
        voice,
        leadMs: 200 + Math.round(r() * 1000),
        beep: withBeep ? { ...BEEPS[(t + v) % 3], gapMs: 300 + Math.round(r() * 600) } : undefined,
        tailMs: withBeep ? 1500 : 4500,
        snrDb: SNRS[(t + 2 * v) % 3],
        seed: seed++,
        heldOut,
      });
    })
  );
  const humans: [string, Voice][] = humanTexts.flatMap((text) =>
    voices.map((voice) => [text, voice] as [string, Voice])
  );
  humans.push(...extraHumans);
  humans.forEach(([text, voice], i) => {
    const r = rng(seed);
    // Every other person speaks again after a while ("Hello? … Hello?").
    const second = i % 2 === 0
      ? { text: pick(r, SECOND_TEXTS), gapMs: 1800 + Math.round(r() * 1200) }
      : undefined;
    out.push({
      label: "human",
      text,
      voice,
      leadMs: 150 + Math.round(r() * 600),
      second,
      tailMs: 4500,
      snrDb: SNRS[i % 3],
      seed: seed++,
      heldOut,
    });
  });
  return out;
}

/** The set's recipes: the tuning part, then the held-out part. */
export function recipes(): Recipe[] {
  const hindi: [string, Voice][] = [
    [HINDI.text, HINDI.voice],
    [HINDI.text, { ...HINDI.voice, rate: 140 }],
  ];
  return [
    ...build(MACHINE_TEXTS, HUMAN_TEXTS, VOICES, hindi, 1),
    ...build(HELD_MACHINE_TEXTS, HELD_HUMAN_TEXTS, HELD_VOICES, [], 10001, true),
  ];
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} failed: ${new TextDecoder().decode(out.stderr)}`);
}

/**
 * `text` in `voice` at 8 kHz, limited to the phone band (300-3400 Hz) and trimmed of the
 * synthesizer's own leading and trailing silence (the recipe places the speech).
 */
async function speak(dir: string, text: string, voice: Voice): Promise<Int16Array> {
  const raw = `${dir}/raw.wav`, out = `${dir}/speech.wav`;
  if (voice.engine === "festival") {
    const txt = `${dir}/text.txt`;
    await Deno.writeTextFile(txt, text);
    await run("text2wave", [
      "-o",
      raw,
      "-eval",
      `(Parameter.set 'Duration_Stretch ${voice.rate})`,
      txt,
    ]);
  } else {
    const args = ["-v", voice.name, "-s", String(voice.rate), "-w", raw];
    if (voice.pitch !== undefined) args.push("-p", String(voice.pitch));
    await run("espeak-ng", [...args, text]);
  }
  // -D: no dither, so a recipe makes the same bytes on every run.
  await run("sox", [
    "-D",
    raw,
    "-r",
    String(RATE),
    "-c",
    "1",
    "-b",
    "16",
    out,
    "sinc",
    "300-3400",
    "silence",
    "1",
    "0.02",
    "0.5%",
    "reverse",
    "silence",
    "1",
    "0.02",
    "0.5%",
    "reverse",
    "norm",
    "-3",
  ]);
  return (await readWav(out)).samples;
}

async function tone(dir: string, hz: number, ms: number): Promise<Int16Array> {
  const out = `${dir}/tone.wav`;
  await run("sox", [
    "-D",
    "-n",
    "-r",
    String(RATE),
    "-c",
    "1",
    "-b",
    "16",
    out,
    "synth",
    String(ms / 1000),
    "sine",
    String(hz),
    "vol",
    "0.3",
  ]);
  return (await readWav(out)).samples;
}

const ms = (samples: number) => (samples * 1000) / RATE;
const samplesOf = (ms: number) => Math.round((ms * RATE) / 1000);

/** RMS of the 20 ms frames louder than -50 dBFS (the speech's active level). */
function activeRms(pcm: Int16Array): number {
  let sum = 0, n = 0;
  const floor = (32768 * 10 ** (-50 / 20)) ** 2;
  for (let o = 0; o + 160 <= pcm.length; o += 160) {
    let e = 0;
    for (let i = o; i < o + 160; i++) e += pcm[i] * pcm[i];
    if (e / 160 >= floor) (sum += e, n += 160);
  }
  return n ? Math.sqrt(sum / n) : 0;
}

async function recipeId(recipe: Recipe): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify({ GENERATOR, recipe }));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Makes (or finds in the cache) one clip. */
export async function makeClip(recipe: Recipe): Promise<Clip> {
  const id = await recipeId(recipe);
  const path = `${SET_DIR}/${recipe.label}-${id}.wav`;
  const meta = `${SET_DIR}/${recipe.label}-${id}.json`;
  try {
    return JSON.parse(await Deno.readTextFile(meta)) as Clip;
  } catch {
    // Not made yet.
  }
  await Deno.mkdir(SET_DIR, { recursive: true });
  const dir = await Deno.makeTempDir({ prefix: "amd-clip-" });
  try {
    const parts: Int16Array[] = [new Int16Array(samplesOf(recipe.leadMs))];
    const first = await speak(dir, recipe.text, recipe.voice);
    parts.push(first);
    const speechStartMs = recipe.leadMs;
    const speechEndMs = speechStartMs + ms(first.length);
    let beepStartMs: number | undefined, beepEndMs: number | undefined;
    if (recipe.second) {
      parts.push(new Int16Array(samplesOf(recipe.second.gapMs)));
      parts.push(await speak(dir, recipe.second.text, recipe.voice));
    }
    if (recipe.beep) {
      parts.push(new Int16Array(samplesOf(recipe.beep.gapMs)));
      beepStartMs = ms(parts.reduce((n, p) => n + p.length, 0));
      const b = await tone(dir, recipe.beep.hz, recipe.beep.ms);
      parts.push(b);
      beepEndMs = beepStartMs + ms(b.length);
    }
    parts.push(new Int16Array(samplesOf(recipe.tailMs)));
    const clean = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) (clean.set(p, at), at += p.length);
    // White noise at snrDb under the speech's active level (Box-Muller on the recipe's seed).
    const r = rng(recipe.seed * 7919);
    const noiseRms = activeRms(first) / 10 ** (recipe.snrDb / 20);
    const noisy = new Int16Array(clean.length);
    for (let i = 0; i < clean.length; i++) {
      const g = Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
      noisy[i] = Math.max(-32768, Math.min(32767, Math.round(clean[i] + g * noiseRms)));
    }
    const line = g711Decode("PCMU", g711Encode("PCMU", noisy));
    await Deno.writeFile(path, encodeWav({ sampleRate: RATE, samples: line }));
    const clip: Clip = {
      id,
      recipe,
      path,
      speechStartMs,
      speechEndMs,
      beepStartMs,
      beepEndMs,
      durationMs: ms(line.length),
    };
    await Deno.writeTextFile(meta, JSON.stringify(clip, null, 1));
    return clip;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The whole set (made on first use), in recipe order. */
export async function labelledSet(filter?: (r: Recipe) => boolean): Promise<Clip[]> {
  const out: Clip[] = [];
  for (const r of recipes().filter(filter ?? (() => true))) out.push(await makeClip(r));
  return out;
}

export async function readClip(clip: Clip): Promise<Int16Array> {
  return (await readWav(clip.path)).samples;
}

if (import.meta.main) {
  const started = performance.now();
  const set = await labelledSet();
  for (const c of set) {
    const r = c.recipe;
    const beep = c.beepStartMs !== undefined ? ` beep ${r.beep!.hz} Hz @${c.beepStartMs}` : "";
    console.log(
      `${r.label.padEnd(7)} ${r.voice.engine}:${r.voice.name}@${r.voice.rate} ` +
        `speech ${c.speechStartMs}-${
          Math.round(c.speechEndMs)
        } ms${beep} snr ${r.snrDb} "${r.text}"`,
    );
  }
  console.log(`${set.length} clips in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
