// A caller's noise (a knock, a cough) and then words over a long reply: the bot goes quiet at the
// noise and stays quiet until the caller's words are over; it never comes back between the two.
// Measured in the audio the caller received. Before the fix the noise's empty recognition resumed
// the bot, which the words then cut again: the caller heard the bot stutter back for 100-700 ms.
import { assert } from "./helpers/assert.ts";
import {
  botSilentAt,
  NOISE_AT_MS,
  noiseThenWords,
  speechEndMs,
  startCallService,
  storyWellUnderWay,
  waitForLog,
} from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";

Deno.test("a noise then words over the bot never bring its voice back in between", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const { caller, sessionId } = await service.call();
    await storyWellUnderWay(caller);

    // 200 ms of silence, a 200 ms noise burst, then the words.
    const noiseAtMs = NOISE_AT_MS;
    const audio = await noiseThenWords("stop please, thank you");
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
