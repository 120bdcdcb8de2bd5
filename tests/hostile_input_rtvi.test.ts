// Hostile input on the RTVI data channel, fed straight into media/rtvi/'s RtviSession wired like a
// call's (the CI-sized sample of `deno task fuzz`'s rtvi surface, same generators). Per input:
// receive() never throws, no unhandled rejection, every message to the page is labelled JSON
// within the channel's 64 KiB and none larger reaches the channel, one message in gets at most
// one answer (a flood at most the rate's burst), and what reaches the handlers can be stored.
// The same messages over a real data channel run in hostile_input_worker.test.ts.
import fc from "fast-check";
import { assertEquals } from "./helpers/assert.ts";
import { checkRtviInput } from "../bench/fuzz/surfaces/rtvi.ts";
import { rtviInput, rtviMessage } from "../bench/fuzz/gen/rtvi.ts";
import { installGuard, takeEscapes } from "../bench/fuzz/guard.ts";
import { setQuiet } from "../common/log.ts";

const RUNS = Number(Deno.env.get("HOSTILE_RTVI_RUNS") ?? 400);

Deno.test("RTVI: hostile messages, sequences and floods are contained", async () => {
  installGuard();
  setQuiet(true);
  await fc.assert(
    fc.asyncProperty(rtviInput, async (input) => {
      const v = await checkRtviInput(input);
      assertEquals(v.violations, [], input.note);
      assertEquals(takeEscapes(), [], input.note);
    }),
    { numRuns: RUNS },
  );
});

Deno.test("RTVI: every single hostile message alone", async () => {
  installGuard();
  setQuiet(true);
  await fc.assert(
    fc.asyncProperty(rtviMessage, async (text) => {
      const v = await checkRtviInput({ messages: [text], note: text.slice(0, 80) });
      assertEquals(v.violations, []);
      assertEquals(takeEscapes(), []);
    }),
    { numRuns: RUNS },
  );
});
