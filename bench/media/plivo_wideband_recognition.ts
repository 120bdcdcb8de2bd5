// What a wideband Plivo stream buys the recogniser: the same festival sentences spoken through the
// FAKE Plivo stream (tests/fakes/plivo_audio_stream.ts) once as audio/x-mulaw at 8 kHz (μ-law,
// up-sampled to 16 kHz on the worker) and once as audio/x-l16 at 16 kHz (handed to the pipeline
// as is), into the whole service in this process (local engines: pocketsphinx's 16 kHz model).
// Word error rate of what reached the brain against the script, per format.
//   deno run -A bench/media/plivo_wideband_recognition.ts   (BENCH_L16_FIRST=1: the L16 call first)
import { werCount } from "../../media/stt/wer.ts";
import { SCRIPTS } from "../../tests/helpers/test_speech.ts";
import { phoneSpeech, startStreamCallRig, until } from "../../tests/helpers/stream_phone_call.ts";

const FORMATS: { contentType: string; rate: number }[] = [
  { contentType: "audio/x-mulaw;rate=8000", rate: 8000 },
  { contentType: "audio/x-l16;rate=16000", rate: 16000 },
];
if (Deno.env.get("BENCH_L16_FIRST")) FORMATS.reverse();

const rows: string[] = [];
for (const format of FORMATS) {
  const rig = await startStreamCallRig({
    plivoContentType: format.contentType,
    reply: () => "Okay.",
  });
  let errors = 0, words = 0;
  const heard: string[] = [];
  try {
    const { stream } = await rig.dial("plivo");
    await until(() => stream.marksPlayed.length >= 1, "the greeting played", 30_000);
    for (const [i, script] of SCRIPTS.entries()) {
      await stream.say(await phoneSpeech(script, format.rate));
      await until(() => rig.brain.turns.length > i, `turn ${i + 1}`, 30_000);
      // The short answer plays before the next sentence, so no turn is cut by a barge-in.
      await until(() => stream.marksPlayed.length >= i + 2, `answer ${i + 1} played`, 30_000);
      const c = werCount(script, rig.brain.turns[i]);
      errors += c.errors;
      words += c.words;
      heard.push(`  ${script}  →  ${rig.brain.turns[i]}`);
    }
    await stream.hangUp();
  } finally {
    await rig.close();
  }
  console.log(`${format.contentType}:\n${heard.join("\n")}`);
  rows.push(
    `| ${format.contentType} | ${SCRIPTS.length} | ${errors}/${words} | ${
      (100 * errors / words).toFixed(1)
    } % |`,
  );
}
console.log("| stream format | sentences | errors/words | WER |");
console.log("| --- | --- | --- | --- |");
for (const r of rows) console.log(r);
