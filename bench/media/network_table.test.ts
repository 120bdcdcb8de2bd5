import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import {
  type CallFigures,
  formatTable,
  recordingErrors,
  rowFigures,
  summariseRow,
  werTally,
} from "./network_table.ts";

const assertAlmostEquals = (actual: number, expected: number) =>
  assert(Math.abs(actual - expected) < 1e-9, `${actual} is not ${expected}`);

const call = (
  turns: [string, string, number][],
  extra: Partial<CallFigures> = {},
): CallFigures => ({
  completed: true,
  lastDelivered: true,
  workerDelivered: true,
  turns: turns.map(([said, heard, latencyMs]) => ({ said, heard, latencyMs })),
  ...extra,
});

Deno.test("WER is pooled over every word of the row, not a mean of each turn's rate", () => {
  // 1 error in 2 words, 0 in 8: pooled 1/10, where the mean of rates would be 0.25.
  assertAlmostEquals(
    werTally([
      { reference: "hello there", hypothesis: "hello" },
      {
        reference: "one two three four five six seven eight",
        hypothesis: "one two three four five six seven eight",
      },
    ]),
    0.1,
  );
  assert(Number.isNaN(werTally([])));
});

Deno.test("recording errors are relative to the call's length", () => {
  assertEquals(
    recordingErrors([
      call([], { recordingSeconds: 99, callSeconds: 100 }),
      call([], { recordingSeconds: 30 }),
    ]),
    [0.01],
  );
});

Deno.test("a row's ratios are taken against the clean row, and its WER also against what clean heard", () => {
  const clean = summariseRow(
    "simulator",
    "clean",
    [
      call([["a b c d", "a b c x", 300], ["e f g h", "e f g h", 400]], { callSeconds: 10 }),
    ],
    1000,
    1,
  );
  const lossy = summariseRow(
    "simulator",
    "10 % loss",
    [
      call([["a b c d", "a b y x", 450], ["e f g h", "e f g h", 600]], { callSeconds: 10 }),
      call([], {
        completed: false,
        lastDelivered: false,
        workerDelivered: false,
        failure: "timed out",
        callSeconds: 10,
      }),
    ],
    4000,
    2,
  );
  const f = rowFigures(lossy, clean);
  assertEquals(f.completed, "1/2");
  assertEquals(f.lastDelivered, "1/2");
  assertEquals(f.workerAcked, "1/2");
  assertAlmostEquals(f.wer, 2 / 8);
  assertAlmostEquals(f.werRatio, 2); // clean: 1 in 8
  assertAlmostEquals(f.werVsClean, 1 / 8); // only "c"→"y" differs from what clean heard
  assertEquals([f.p50, f.p99], [450, 600]);
  assertAlmostEquals(f.p50Ratio, 1.5);
  assertAlmostEquals(f.receiverShare, 2 / (4000 / 20)); // 2 ms of 200 ms per call-second
  assertEquals(lossy.failures, ["timed out (ended undefined)"]);
  const table = formatTable([clean, lossy]);
  assert(table.includes("| simulator | clean | 1/1 | 1/1 | 1/1 | 12.5 % | 1.00× |"), table);
  assert(
    table.includes("| simulator | 10 % loss | 1/2 | 1/2 | 1/2 | 25.0 % | 2.00× | 12.5 % |"),
    table,
  );
});
