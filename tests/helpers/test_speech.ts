// Test and bench audio for the recogniser: scripted sentences spoken by festival (the test
// callers' voice) or espeak-ng, as 16 kHz PCM, directly or through Opus like a call's audio.
import { callerSpeechWav, speechWav, throughOpus } from "./audio.ts";
import { readWav } from "../../caller/wav.ts";
import type { RecognitionStream } from "../../media/stt/engine.ts";

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

/**
 * Sentences for measuring decoder settings (bench/media/stt.ts --wer): settings are chosen on
 * DEV_SCRIPTS and checked on HELD_SCRIPTS, which no choice looked at. None is in SCRIPTS.
 */
export const DEV_SCRIPTS = [
  "i would like to book a table for two tonight",
  "my order has not arrived yet",
  "can you tell me where the nearest station is",
  "i need to change my password",
  "the internet has been down since this morning",
  "how much does it cost to send a parcel to france",
  "i want to cancel my subscription",
  "is there a doctor available this afternoon",
  "please call me back after five",
  "what time does the next train leave",
  "i was charged twice for the same thing",
  "can i pay with a credit card",
  "the heating in my flat is not working",
  "i would like to speak to the manager",
  "do you have this shirt in a larger size",
  "my flight has been cancelled",
  "where can i park my car",
  "i forgot my account number",
  "could you repeat that please",
  "how many days does the refund take",
  "i want to move my appointment to next week",
  "the water is leaving a brown stain in the sink",
  "is breakfast included in the price",
  "can you send a taxi to my house",
  "i have a problem with my phone bill",
  "what is the balance of my account",
  "i would like to renew my library books",
  "are pets allowed in the hotel",
  "my card was declined at the shop",
  "thank you that is all for today",
];

export const HELD_SCRIPTS = [
  "i need a plumber as soon as possible",
  "when does the pharmacy close",
  "i would like to order a large pizza",
  "my package was delivered to the wrong address",
  "can i bring my children to the meeting",
  "the printer in the office is broken again",
  "how do i reset my router",
  "i want to report a lost wallet",
  "is the museum open on monday",
  "could you check the status of my claim",
  "i am calling about the job advertisement",
  "please add milk to my shopping list",
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
