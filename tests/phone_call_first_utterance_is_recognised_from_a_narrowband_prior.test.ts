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
      // Measured 0.27, 0.27, 0.14 (of 37 words), and 0.351 once in CI on a machine loaded by other
      // work (a word's onset lost); opened "wideband" as before, 0.43 and 0.41. The words heard
      // vary with timing (docs/sip.md), so the bound sits between the two. The engine-level tests
      // (media/stt/phone_audio_first_utterance_starts_from_a_narrowband_prior.test.ts) hold the
      // wide before/after margin; this one proves the phone call's path opens it.
      assert(wer <= 0.38, `WER ${wer.toFixed(3)}: ${rig.brain.turns.join(" | ")}`);
    } finally {
      await rig.close();
    }
  },
});
