// A caller's noise (a knock, a cough) and then words over a long reply: the bot goes quiet at the
// noise and stays quiet until the caller's words are over; it never comes back between the two.
// Measured in the audio the caller received. Before the fix the noise's empty recognition resumed
// the bot, which the words then cut again: the caller heard the bot stutter back for 100-700 ms.
import { assert } from "./helpers/assert.ts";
import {
  botSilentAt,
  speech,
  startCallService,
  storyWellUnderWay,
  waitForLog,
} from "./helpers/call_harness.ts";
import { concat, pinkNoise } from "./helpers/test_signals.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";

/** 16 kHz → 48 kHz by repeating samples (enough for a noise burst). */
function to48k(pcm: Int16Array): Int16Array {
  return Int16Array.from({ length: pcm.length * 3 }, (_, i) => pcm[Math.floor(i / 3)]);
}

/** The end of the last 10 ms of 48 kHz `pcm` louder than `level`, in ms. */
function speechEndMs(pcm: Int16Array, level = 300): number {
  for (let ms = Math.floor(pcm.length / 48 / 10) * 10; ms > 0; ms -= 10) {
    const frame = pcm.subarray((ms - 10) * 48, ms * 48);
    const rms = Math.sqrt(frame.reduce((s, v) => s + v * v, 0) / Math.max(1, frame.length));
    if (rms > level) return ms;
  }
  return 0;
}

Deno.test("a noise then words over the bot never bring its voice back in between", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const { caller, sessionId } = await service.call();
    await storyWellUnderWay(caller);

    // 200 ms of silence, a 200 ms noise burst, then the words (festival leads them with ~300 ms
    // of silence: shorter than the window an empty pause needs).
    const noiseAtMs = 200;
    const audio = concat(
      new Int16Array(48 * noiseAtMs),
      to48k(pinkNoise(200, -20)),
      await speech("stop please, thank you"),
    );
    const { startedAt } = await caller.say(audio);
    await waitForLog(service, sessionId, (e) => e.kind === "barge_in");
    const endOfWords = startedAt + speechEndMs(audio);
    await new Promise((r) => setTimeout(r, Math.max(0, endOfWords - performance.now()) + 200));

    const stoppedAt = botSilentAt(caller, startedAt + noiseAtMs);
    assert(stoppedAt !== undefined, "the bot's audio never stopped");
    const back = caller.heardFrames.filter((f) =>
      f.at > stoppedAt && f.at < endOfWords && f.rms > 300
    );
    const log = (await service.log(sessionId)).filter((e) => e.source === "worker").map((e) =>
      `${e.kind} ${JSON.stringify(e.data)}`
    );
    assert(
      back.length === 0,
      `the bot came back for ${back.length} frames, ${
        (back[0]?.at ?? 0) - startedAt - noiseAtMs
      } ms after the noise began; worker log:\n${log.join("\n")}`,
    );
    await caller.hangUp();
    await service.record(sessionId, "ended");
  } finally {
    await service.close();
  }
});
