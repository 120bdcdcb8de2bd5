// The caller simulator's script: what the caller says, turn by turn, as text to synthesize or as
// recorded audio, and the synthesis of the text turns with the local engine.
import type { SynthesisEngine } from "../media/tts/engine.ts";
import { EspeakEngine } from "../media/tts/espeak_engine.ts";
import { readWav, to48k } from "./wav.ts";

/** One caller turn: text the local engine speaks, or a WAV file's audio. */
export type ScriptTurn = { kind: "text"; text: string } | { kind: "wav"; path: string };

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
  pcm: Int16Array;
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
  makeEngine: () => SynthesisEngine = () => new EspeakEngine(),
): Promise<SpokenTurn[]> {
  const out: SpokenTurn[] = [];
  let tts: SynthesisEngine | undefined; // started only when a turn is text
  try {
    for (const t of turns) {
      if (t.kind === "text") {
        tts ??= makeEngine();
        const pcm = await synthesizeText(tts, t.text, voice);
        if (pcm.length === 0) throw new Error(`synthesis of "${t.text}" produced no audio`);
        out.push({ label: t.text, pcm });
      } else {
        const pcm = to48k(await readWav(t.path));
        out.push({ label: `[${t.path}, ${(pcm.length / 48000).toFixed(1)} s]`, pcm });
      }
    }
  } finally {
    await tts?.close();
  }
  return out;
}

/** Where the last sample louder than `level` lies, in ms from the start (0 when all quiet). */
export function speechEndMs(pcm: Int16Array, level = 500): number {
  for (let i = pcm.length - 1; i >= 0; i--) {
    if (Math.abs(pcm[i]) > level) return ((i + 1) * 1000) / 48000;
  }
  return 0;
}
