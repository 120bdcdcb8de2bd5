// The caller simulator's script: what the caller says, turn by turn, as text to synthesize or as
// recorded audio, and the synthesis of the text turns with a voice the local recogniser hears.
import type { SynthesisEngine } from "../media/tts/engine.ts";
import { EspeakEngine } from "../media/tts/espeak_engine.ts";
import { festivalInstalled, festivalSpeech } from "./festival_voice.ts";
import { mixNoise, type NoiseSpec, speechRms } from "./noise.ts";
import { lastVoicedMs } from "./turn_latency.ts";
import { readWav, to48k } from "./wav.ts";

/** One caller turn: text the caller voice speaks, a WAV file's audio, or text typed. */
export type ScriptTurn =
  | { kind: "text"; text: string }
  | { kind: "wav"; path: string }
  | { kind: "typed"; text: string };

/**
 * A script file's turns: one per line; blank lines and lines whose first non-blank character is
 * `#` are skipped (a `#` later in a line is part of the text, e.g. "press #").
 */
export function parseScript(source: string): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (const raw of source.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    turns.push({ kind: "text", text: line });
  }
  return turns;
}

/** A turn ready to be said: 48 kHz mono PCM and how the conversation shows it. */
export interface SpokenTurn {
  /** The text for text turns; `[file.wav, 2.4 s]` for audio. */
  label: string;
  /** What is said, for text turns: the reference the recognised text is scored against. */
  text?: string;
  /** Typed, not spoken: `text` goes as the page's send-text and `pcm` is empty. */
  typed?: boolean;
  pcm: Int16Array;
  /**
   * Where the caller's speech ends in `pcm`, in samples, found in the source audio before any
   * noise was mixed in (the simulator's own knowledge of what it plays, not a threshold on the
   * mix). Absent: the last sample louder than the speech level in `pcm`.
   */
  speechEnd?: number;
}

/** Who speaks text turns: festival where installed (English), else espeak-ng. */
export type CallerVoice = "festival" | "espeak";

/** The voice text turns in `language` get on this machine. */
export async function callerVoiceFor(language: string): Promise<CallerVoice> {
  return language === "LANGUAGE_EN" && await festivalInstalled() ? "festival" : "espeak";
}

/** Which voice says the text turns, so a misheard turn can be put down to it. */
export function voiceLine(speaker: CallerVoice): string {
  return speaker === "festival"
    ? "caller voice: festival (text2wave)"
    : "caller voice: espeak-ng (the local recogniser mishears it more often than festival)";
}

export interface PrepareOptions {
  /** Default: callerVoiceFor(voice.language). */
  speaker?: CallerVoice;
  /** Mixed under every turn after its speech end is known. */
  noise?: NoiseSpec;
  /** The espeak-ng engine (tests pass their own). */
  makeEngine?: () => SynthesisEngine;
}

export interface VoiceOptions {
  /** Proto enum names, e.g. "VOICE_ARJUN", "LANGUAGE_EN". */
  voice: string;
  language: string;
}

/** Synthesizes one text with `engine` into one 48 kHz buffer. */
export async function synthesizeText(
  engine: SynthesisEngine,
  text: string,
  voice: VoiceOptions,
): Promise<Int16Array> {
  const parts: Int16Array[] = [];
  for await (const chunk of engine.synthesize(text, voice)) {
    if (chunk.pcm.length) parts.push(chunk.pcm);
  }
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), o += p.length);
  return out;
}

/**
 * Every turn as audio, before the call starts, so that a bad WAV or an unserved voice is a
 * usage error rather than a failure halfway through a call.
 */
export async function prepareTurns(
  turns: ScriptTurn[],
  voice: VoiceOptions,
  options: PrepareOptions | (() => SynthesisEngine) = {},
): Promise<SpokenTurn[]> {
  const o = typeof options === "function" ? { makeEngine: options } : options;
  const makeEngine = o.makeEngine ?? (() => new EspeakEngine());
  const out: SpokenTurn[] = [];
  let tts: SynthesisEngine | undefined; // started only when a turn is text
  try {
    for (const t of turns) {
      if (t.kind === "text") {
        const speaker = o.speaker ?? await callerVoiceFor(voice.language);
        let pcm: Int16Array;
        if (speaker === "festival") pcm = await festivalSpeech(t.text);
        else pcm = await synthesizeText(tts ??= makeEngine(), t.text, voice);
        if (pcm.length === 0) throw new Error(`synthesis of "${t.text}" produced no audio`);
        out.push(withNoise({ label: t.text, text: t.text, pcm }, o.noise));
      } else if (t.kind === "typed") {
        out.push({ label: `(typed) ${t.text}`, text: t.text, typed: true, pcm: new Int16Array(0) });
      } else {
        const pcm = to48k(await readWav(t.path));
        const label = `[${t.path}, ${(pcm.length / 48000).toFixed(1)} s]`;
        out.push(withNoise({ label, pcm }, o.noise));
      }
    }
  } finally {
    await tts?.close();
  }
  return out;
}

/** The turn's speech end from its clean audio, then the noise mixed under it. */
export function withNoise(turn: SpokenTurn, noise: NoiseSpec | undefined): SpokenTurn {
  const speechEnd = turn.speechEnd ?? speechEndSample(turn.pcm);
  if (!noise) return { ...turn, speechEnd };
  const start = speechStartSample(turn.pcm);
  const level = speechRms(turn.pcm, start, speechEnd);
  return { ...turn, speechEnd, pcm: mixNoise(turn.pcm, noise, level) };
}

/** The end of the last sample louder than the speech level, in samples (0 when all quiet). */
export function speechEndSample(pcm: Int16Array): number {
  const ms = lastVoicedMs(pcm);
  return ms === null ? 0 : Math.round((ms * 48000) / 1000);
}

function speechStartSample(pcm: Int16Array, level = 500): number {
  const i = pcm.findIndex((v) => v > level || v < -level);
  return i < 0 ? 0 : i;
}

/** Where the last sample louder than `level` lies, in ms from the start (0 when all quiet). */
export function speechEndMs(pcm: Int16Array, level = 500): number {
  for (let i = pcm.length - 1; i >= 0; i--) {
    if (Math.abs(pcm[i]) > level) return ((i + 1) * 1000) / 48000;
  }
  return 0;
}
