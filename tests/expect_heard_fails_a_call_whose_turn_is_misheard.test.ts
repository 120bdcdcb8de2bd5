// `deno task call --expect-heard`: every text turn prints what was said against what the service
// heard, with its word error rate, and a turn heard worse than the threshold fails the call. The
// README's "tell me a story" spoken by espeak-ng is misheard by the local recogniser (issue 26:
// "do you saw or read"): exit 1, "misheard". Spoken by festival, the default caller voice where
// text2wave is installed, it is heard within the threshold and the call passes.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { runCall } from "../cli/call.ts";

const STORY = "tell me a story";

Deno.test("--expect-heard fails a call whose turn is misheard, and passes one heard right", async () => {
  const service = await startCallService(createExampleBrain());
  const call = async (...extra: string[]) => {
    const out: string[] = [];
    const code = await runCall(
      [
        ...[
          "--api",
          service.api.url,
          "--key",
          service.tenant.sk,
          "--agent",
          service.tenant.agent_id,
        ],
        ...["--say", STORY, "--expect-heard", ...extra],
      ],
      {},
      { out: (l) => out.push(l), err: (l) => out.push(l) },
    );
    return { code, text: out.join("\n") };
  };
  try {
    const festival = await call();
    assertEquals(festival.code, 0, festival.text);
    assert(festival.text.includes("caller voice: festival (text2wave)"), festival.text);
    // Heard within the threshold, not always word for word: the audio crosses a real WebRTC path,
    // and CI once heard "tell me this story" (WER 0.25, which passes).
    const heard = Number(
      festival.text.match(/said vs heard \(turn 1\): "tell me a story" \/ ".*": WER ([\d.]+)/)?.[1],
    );
    assert(heard <= 0.25, festival.text);

    const espeak = await call("--caller-voice", "espeak");
    assert(espeak.text.includes("caller voice: espeak-ng"), espeak.text);
    const wer = Number(espeak.text.match(/said vs heard \(turn 1\): .*: WER ([\d.]+)/)?.[1]);
    assert(wer > 0.25, `espeak-ng heard well this time?\n${espeak.text}`);
    assertEquals(espeak.code, 1, espeak.text);
    assert(
      /FAILED \(misheard\): turn 1: said "tell me a story", heard ".*": WER [\d.]+ is over 0\.25/
        .test(espeak.text),
      espeak.text,
    );
  } finally {
    await service.close();
  }
});
