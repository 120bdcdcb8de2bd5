// The turn-taking bench's audio and its key, made here: each phrase is spoken once per voice
// (festival or espeak-ng, at 16 kHz, the synthesiser's own leading and trailing silence trimmed
// by sox) and cached under test-artifacts/turn/ (gitignored); a clip is phrases joined by
// silences chosen here, so where each phrase starts and ends, and so where the turn truly ends,
// is known exactly (the key). The phone band is the same clip through what a phone line does:
// down to 8 kHz (Speex, anti-aliased), G.711 μ-law with the project's codec, and back up to
// 16 kHz by the worker's own edge (media/phone/edge_audio.ts CallerEdge).
import { readWav } from "../../caller/wav.ts";
import { CallerEdge } from "../../media/phone/edge_audio.ts";
import { g711Encode } from "../../media/phone/g711.ts";
import { resample } from "../../wasm/resampler.ts";
import type { LanguageScripts, TurnKind, Voice } from "./phrases.ts";
import { sableOf, splitAtBreaks, ssmlOf } from "./utterance.ts";

export const RATE = 16000;
const ROOT = new URL("../../", import.meta.url).pathname;
export const CACHE_DIR = `${ROOT}test-artifacts/turn`;
/** Bumped when the way phrases are made changes, so old cached files are not reused. */
const GENERATOR = 1;

/** Pauses inside a turn, ms: each paused turn is made once with each. */
export const PAUSES_MS = [250, 400, 600, 800, 1000, 1500];
/** Silence before the first word and after the last (outlasts the longest window, 2000 ms). */
export const LEAD_MS = 300;
export const TAIL_MS = 2600;

export type Band = "16k" | "8k";

/** One phrase's place in a clip (ms from the clip's start). */
export interface KeySegment {
  text: string;
  startMs: number;
  endMs: number;
}

/** Where the turn truly ends, and everything said before it, by construction. */
export interface TurnKey {
  segments: KeySegment[];
  /** End of the last phrase: the turn's true end. */
  endMs: number;
  /** The silences between phrases, ms (empty for a turn said in one go). */
  pausesMs: number[];
}

export interface Clip {
  id: string;
  language: string;
  voice: string;
  /** turn: the caller's turn; backchannel / barge_in: said while the bot speaks. */
  role: "turn" | "backchannel" | "barge_in";
  kind: TurnKind | "backchannel" | "barge_in";
  pauseMs: number;
  key: TurnKey;
  /** 16 kHz PCM (the 8 kHz band is made from it by phoneBand). */
  pcm: Int16Array;
}

const ms = (samples: number) => (samples * 1000) / RATE;
const samplesOf = (ms: number) => Math.round((ms * RATE) / 1000);

/**
 * Joins phrases with silences: `pausesMs[i]` follows phrase i. The key is read off the samples
 * placed, so it is exact (to a sample) whatever the phrases' lengths.
 */
export function assemble(
  phrases: { text: string; pcm: Int16Array }[],
  pausesMs: number[],
  leadMs = LEAD_MS,
  tailMs = TAIL_MS,
): { pcm: Int16Array; key: TurnKey } {
  if (phrases.length === 0) throw new Error("a turn needs at least one phrase");
  if (pausesMs.length !== phrases.length - 1) {
    throw new Error(`${phrases.length} phrases need ${phrases.length - 1} pauses`);
  }
  const gaps = [leadMs, ...pausesMs];
  const total = gaps.reduce((n, g) => n + samplesOf(g), 0) +
    phrases.reduce((n, p) => n + p.pcm.length, 0) + samplesOf(tailMs);
  const pcm = new Int16Array(total);
  const segments: KeySegment[] = [];
  let at = 0;
  phrases.forEach((p, i) => {
    at += samplesOf(gaps[i]);
    pcm.set(p.pcm, at);
    segments.push({ text: p.text, startMs: ms(at), endMs: ms(at + p.pcm.length) });
    at += p.pcm.length;
  });
  return { pcm, key: { segments, endMs: segments.at(-1)!.endMs, pausesMs: [...pausesMs] } };
}

/**
 * The clip as a caller on a phone line is heard by the worker: 8 kHz, μ-law, then the worker's
 * 8 → 16 kHz edge. Same length as the input (the edge's filter delay, under 1 ms, is kept).
 */
export function phoneBand(pcm16k: Int16Array): Int16Array {
  const narrow = resample(pcm16k, RATE, 8000, { quality: 5 });
  const codes = g711Encode("PCMU", narrow);
  const out = new Int16Array(pcm16k.length);
  let at = 0;
  const edge = new CallerEdge("PCMU", (frame) => {
    const n = Math.min(frame.length, out.length - at);
    out.set(frame.subarray(0, n), at);
    at += n;
  });
  try {
    edge.pushPayload(codes);
    // A trailing partial frame never comes out of the edge: pad with μ-law silence.
    edge.pushPayload(new Uint8Array(160).fill(0xff));
  } finally {
    edge.close();
  }
  return out;
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} failed: ${new TextDecoder().decode(out.stderr)}`);
}

async function hashOf(x: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify({ GENERATOR, x }));
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...hash.slice(0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export const voiceName = (v: Voice) => `${v.engine}:${v.name}@${v.rate}`;

/** `text` in `voice` at 16 kHz, trimmed of silence; cached by text and voice. */
export function speak(text: string, voice: Voice): Promise<Int16Array> {
  return synthesise(text, voice, false);
}

/**
 * A paused turn's phrases spoken as one utterance with a break at each pause (utterance.ts),
 * cut back into its phrases at the breaks; cached as the whole utterance.
 */
export async function speakTurn(phrases: string[], voice: Voice): Promise<Int16Array[]> {
  if (phrases.length === 1) return [await speak(phrases[0], voice)];
  const markup = voice.engine === "festival" ? sableOf(phrases) : ssmlOf(phrases);
  return splitAtBreaks(await synthesise(markup, voice, true), phrases.length);
}

async function synthesise(text: string, voice: Voice, markup: boolean): Promise<Int16Array> {
  const path = `${CACHE_DIR}/${await hashOf(
    markup ? { text, voice, markup } : { text, voice },
  )}.wav`;
  try {
    return (await readWav(path)).samples;
  } catch {
    // Not made yet.
  }
  await Deno.mkdir(CACHE_DIR, { recursive: true });
  const dir = await Deno.makeTempDir({ prefix: "turn-phrase-" });
  try {
    const raw = `${dir}/raw.wav`;
    if (voice.engine === "festival") {
      await Deno.writeTextFile(`${dir}/text.txt`, text);
      await run("text2wave", [
        ...(markup ? ["-mode", "sable"] : []),
        "-o",
        raw,
        "-eval",
        `(Parameter.set 'Duration_Stretch ${voice.rate})`,
        `${dir}/text.txt`,
      ]);
    } else {
      const args = ["-v", voice.name, "-s", String(voice.rate), "-w", raw, text];
      await run("espeak-ng", markup ? ["-m", ...args] : args);
    }
    // -D: no dither, so a phrase makes the same bytes on every run; trimmed both ends at 0.5 %.
    const trim = ["silence", "1", "0.02", "0.5%"];
    await run("sox", [
      "-D",
      raw,
      "-r",
      String(RATE),
      "-c",
      "1",
      "-b",
      "16",
      `${dir}/out.wav`,
      ...trim,
      "reverse",
      ...trim,
      "reverse",
      "norm",
      "-3",
    ]);
    await Deno.rename(`${dir}/out.wav`, path);
    return (await readWav(path)).samples;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * How a paused turn is spoken: `utterance` (the default) as one utterance with breaks, cut at
 * them; `phrases` each phrase alone (round 1's data: every pause follows a statement's fall).
 */
export type Making = "utterance" | "phrases";

/**
 * Every clip of a language: each turn in each voice, once with each pause of PAUSES_MS when it
 * has more than one phrase (a turn in one go once), and each backchannel and barge-in.
 */
export async function clipsOf(s: LanguageScripts, making: Making = "utterance"): Promise<Clip[]> {
  const clips: Clip[] = [];
  for (const voice of s.voices) {
    const v = voiceName(voice);
    const said = async (text: string) => ({ text, pcm: await speak(text, voice) });
    for (const [n, turn] of s.turns.entries()) {
      const phrases = making === "utterance"
        ? (await speakTurn(turn.phrases, voice)).map((pcm, i) => ({ text: turn.phrases[i], pcm }))
        : await Promise.all(turn.phrases.map(said));
      const pauses = phrases.length > 1 ? PAUSES_MS : [0];
      for (const pauseMs of pauses) {
        const { pcm, key } = assemble(phrases, Array(phrases.length - 1).fill(pauseMs));
        const id = `${s.code}/${v}/${turn.kind}${n}/${pauseMs}`;
        clips.push({
          id,
          language: s.code,
          voice: v,
          role: "turn",
          kind: turn.kind,
          pauseMs,
          key,
          pcm,
        });
      }
    }
    for (const role of ["backchannel", "barge_in"] as const) {
      for (const text of role === "backchannel" ? s.backchannels : s.bargeIns) {
        const { pcm, key } = assemble([await said(text)], []);
        const id = `${s.code}/${v}/${role}/${text}`;
        clips.push({ id, language: s.code, voice: v, role, kind: role, pauseMs: 0, key, pcm });
      }
    }
  }
  return clips;
}
