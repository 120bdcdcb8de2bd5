// Hostile brain frames into the worker's own decoding path (media/brain/connection.ts's receive,
// then media/call/conversation.ts's frame handling, with stand-in speech engines), the CI-sized
// sample of `deno task fuzz`'s brain surface with the same generators: valid frames with random
// and huge fields and out-of-order sequence numbers, the same with bytes flipped, cut or
// extended, random bytes, floods of one frame. Per frame: nothing thrown (an exception there is
// an uncaught error in the worker), no unhandled rejection, a frame that decodes is handled and
// one that does not fails the call as brain_protocol_error, and every message the page would get
// is JSON within the channel's 64 KiB. The same over a real WebSocket: hostile_input_worker.
import fc from "fast-check";
import { assertEquals } from "./helpers/assert.ts";
import {
  type ConversationHarness,
  feedBrainFrames,
  silentBrain,
} from "../bench/fuzz/surfaces/brain.ts";
import { brainSequence } from "../bench/fuzz/gen/brain.ts";
import { Tally } from "../bench/fuzz/tally.ts";
import { installGuard } from "../bench/fuzz/guard.ts";
import { setQuiet } from "../common/log.ts";

const RUNS = Number(Deno.env.get("HOSTILE_BRAIN_RUNS") ?? 150);

Deno.test("brain frames: the worker's decoding path contains every hostile frame", async () => {
  installGuard();
  setQuiet(true);
  const brain = silentBrain();
  const state: { harness?: ConversationHarness; frames: number } = { frames: 0 };
  try {
    await fc.assert(
      fc.asyncProperty(brainSequence(), async (frames) => {
        const tally = new Tally("brain");
        await feedBrainFrames(tally, brain.url, [frames], { state, perConversation: 100 });
        assertEquals(tally.samples, [], frames.map((f) => f.note).join(", "));
      }),
      { numRuns: RUNS },
    );
  } finally {
    await state.harness?.finish();
    await brain.close();
  }
});
