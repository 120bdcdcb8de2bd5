// The caller simulator puts the end of the caller's speech where its words end, from the clean
// speech it mixed the noise into, not at the last loud sample of the mix. With brown noise 20 dB
// below the speech going on 6 s after it, the amplitude of the mix ends with the noise: the old
// simulator measured a transcript latency of about −5.5 s and failed the turn with "the bot's
// reply was not heard" (it looked for bot audio after the noise ended, when the reply had long
// started). Here the call passes with figures that start at the words' end.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { prepareTurns } from "../caller/script.ts";
import { formatEvent, simulateCall } from "../caller/simulator.ts";
import { lastVoicedMs } from "../caller/turn_latency.ts";

const ASK = "what is the weather like today";

Deno.test("the end of the caller's speech is where its words end, with brown noise after them", async () => {
  const [turn] = await prepareTurns([{ kind: "text", text: ASK }], {
    voice: "VOICE_ARJUN",
    language: "LANGUAGE_EN",
  }, { speaker: "festival", noise: { kind: "brown", db: -20, tailMs: 6000 } });
  // The mix is loud to its end: an amplitude threshold would put the end of speech 6 s late.
  const wordsEndMs = (turn.speechEnd! * 1000) / 48000;
  const mixEndMs = lastVoicedMs(turn.pcm)!;
  assert(
    mixEndMs - wordsEndMs > 5500,
    `words end ${wordsEndMs} ms, the mix's loud end ${mixEndMs} ms`,
  );

  const service = await startCallService(createExampleBrain());
  try {
    const lines: string[] = [];
    const result = await simulateCall({
      api: service.api.url,
      key: service.tenant.sk,
      agent: service.tenant.agent_id,
      timeoutMs: 20_000,
      turns: [turn],
      onEvent: (e) => lines.push(formatEvent(e)),
    });
    const text = lines.join("\n");
    assertEquals(result.exit_code, 0, text);
    const { transcript, bot_audio } = result.turns[0].latency;
    // The recogniser finalises after the words, not 5.5 s before the measured end.
    assert(transcript !== null && transcript! >= 0 && transcript! < 4000, text);
    assert(bot_audio !== null && bot_audio! > 0 && bot_audio! < 6000, text);
    assert((result.turns[0].wer ?? 1) <= 0.5, text);
  } finally {
    await service.close();
  }
});
