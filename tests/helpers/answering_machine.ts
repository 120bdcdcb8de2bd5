// What a callee's phone sends when the service calls it (issue 34's machine detection): an
// answering machine's recorded greeting then its beep, or a person's "Hello?" then a wait. The
// voice is festival at 8 kHz (as bench/amd/labelled_set.ts makes its machines), the beep a steady
// sine as sox synth makes one; both as 8 kHz PCM, before the line's μ-law.
import { callerSpeechWav } from "./audio.ts";
import { readWav } from "../../caller/wav.ts";
import { g711Encode } from "../../media/phone/g711.ts";

export const VOICEMAIL_GREETING =
  "Hi, you have reached the voicemail of Sam Jones. I cannot take your call right now, " +
  "so please leave your name and number after the tone.";

export interface CalleeAudio {
  /** 8 kHz PCM from the answer on. */
  pcm8k: Int16Array;
  /** Where its beep starts and ends (ms from the start), on a machine's. */
  beep?: { startMs: number; endMs: number; hz: number };
}

const silence = (ms: number) => new Int16Array(ms * 8);

function sine(hz: number, ms: number, amplitude = 8000): Int16Array {
  return new Int16Array(ms * 8).map((_, i) =>
    Math.round(amplitude * Math.sin(2 * Math.PI * hz * i / 8000))
  );
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A voicemail: 0.5 s of quiet, the greeting, 0.6 s, a 1000 Hz beep of 400 ms, then quiet. */
export async function voicemailWithBeep(text = VOICEMAIL_GREETING): Promise<CalleeAudio> {
  const speech = (await readWav(await callerSpeechWav(text, 0, 8000))).samples;
  const before = [silence(500), speech, silence(600)];
  const startMs = before.reduce((n, p) => n + p.length, 0) / 8;
  return {
    pcm8k: concat([...before, sine(1000, 400), silence(4000)]),
    beep: { startMs, endMs: startMs + 400, hz: 1000 },
  };
}

/** A person: 0.3 s of quiet, "Hello?", then `waitMs` of quiet (waiting for the caller). */
export async function personSaysHello(waitMs = 6000): Promise<CalleeAudio> {
  const speech = (await readWav(await callerSpeechWav("Hello?", 0, 8000))).samples;
  return { pcm8k: concat([silence(300), speech, silence(waitMs)]) };
}

/** The audio as μ-law bytes, 160 a packet, as a phone sends it. */
export const ulawOf = (a: CalleeAudio): Uint8Array => g711Encode("PCMU", a.pcm8k);
