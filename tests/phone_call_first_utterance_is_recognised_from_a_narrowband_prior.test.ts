// A phone call's first utterance, end to end: festival at 8 kHz spoken as a telephony provider's
// μ-law media stream (the FAKE Twilio of tests/fakes/) into the in-process worker, whose phone call
// opens recognition "narrowband" and so starts from the narrowband prior (media/stt/seed_prior.ts).
// Before, it started from the wideband one and read about twice the words wrong
// (bench/media/phone_recognition.ts; docs/sip.md "Recognition of phone audio").
import { assert } from "./helpers/assert.ts";
import { phoneSpeech, startStreamCallRig, until } from "./helpers/stream_phone_call.ts";
import { werCount } from "../media/stt/wer.ts";

/** Said as each call's first utterance (the first is the one docs/sip.md found misheard). */
const FIRST_WORDS = [
  "i am looking for a cheap hotel near the airport",
  "what are your opening hours on sunday",
  "could you send me the bill by email",
  "i lost my credit card yesterday",
  "how long will the delivery take",
];

Deno.test({
  name: "a phone call's first utterance reaches the brain read from a narrowband prior",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const rig = await startStreamCallRig();
    // What each call's recognition was opened for: the path this test pins.
    const channels: string[] = [];
    const recognition = rig.service.engines.recognition;
    const open = recognition.open.bind(recognition);
    recognition.open = (language, onFallback, usage, channel) => {
      channels.push(channel ?? "wideband");
      return open(language, onFallback, usage, channel);
    };
    try {
      let errors = 0, words = 0;
      for (const [i, text] of FIRST_WORDS.entries()) {
        const { stream } = await rig.dial("twilio");
        await until(() => stream.marksPlayed.length >= 1, "the greeting played");
        await stream.say(await phoneSpeech(text));
        await until(() => rig.brain.turns.length > i, "the caller's turn at the brain");
        const c = werCount(text, rig.brain.turns[i]);
        errors += c.errors;
        words += c.words;
        await stream.hangUp();
      }
      const wer = errors / words;
      console.log(`first utterances: WER ${wer.toFixed(3)}: ${rig.brain.turns.join(" | ")}`);
      assert(
        channels.length === FIRST_WORDS.length && channels.every((c) => c === "narrowband"),
        `recognition opened for ${channels.join(", ")}`,
      );
      // Measured 0.14-0.35 (of 37 words) from the narrowband prior, 0.41-0.43 from the wideband
      // one; the words heard vary with timing on a loaded machine (docs/sip.md), so a WER bound
      // between the two failed CI once at the edge. The engine-level test
      // (media/stt/phone_audio_first_utterance_starts_from_a_narrowband_prior.test.ts) holds the
      // before/after margin on fixed audio; this one pins that a phone call opens "narrowband"
      // and that its audio, carried as μ-law and upsampled, is still read (a broken path reads
      // nearly every word wrong).
      assert(wer <= 0.5, `WER ${wer.toFixed(3)}: ${rig.brain.turns.join(" | ")}`);
    } finally {
      await rig.close();
    }
  },
});
