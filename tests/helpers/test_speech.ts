// Test and bench audio for the recogniser: scripted sentences spoken by festival (the test
// callers' voice) or espeak-ng, as 16 kHz PCM, directly or through Opus like a call's audio.
import { callerSpeechWav, speechWav, throughOpus } from "../../tests/helpers/audio.ts";
import { readWav } from "../../caller/wav.ts";
import type { RecognitionStream } from "./engine.ts";

export type TestVoice = "festival" | "espeak";

/** Everyday sentences, none used to tune the decoder (media/stt/README.md). */
export const SCRIPTS = [
  "what is the weather like today",
  "could you send me the bill by email",
  "i am looking for a cheap hotel near the airport",
  "what are your opening hours on sunday",
  "i lost my credit card yesterday",
  "can i speak to a real person",
  "please remind me to buy milk and bread",
  "how long will the delivery take",
];

/** `text` spoken by `voice`, read at 16 kHz (sox resamples from the voice's own rate). */
export async function speech16k(text: string, voice: TestVoice = "festival"): Promise<Int16Array> {
  const wav = voice === "festival"
    ? await callerSpeechWav(text, 0.3, 16000)
    : await speechWav(text, 0.3, 16000);
  return (await readWav(wav)).samples;
}

/** `text` spoken by `voice` at 48 kHz, Opus-encoded in 20 ms frames and decoded at 16 kHz. */
export async function speechThroughOpus(
  text: string,
  voice: TestVoice = "festival",
): Promise<Int16Array> {
  const wav = voice === "festival" ? await callerSpeechWav(text) : await speechWav(text);
  return throughOpus((await readWav(wav)).samples);
}

/** Pushes `pcm` in 20 ms frames, as a call does. */
export function pushFrames(stream: RecognitionStream, pcm: Int16Array): void {
  for (let o = 0; o < pcm.length; o += 320) stream.push(pcm.subarray(o, o + 320));
}
