// The worker's data channel to a werift caller at 10 % random loss each way (issue 25): before the
// flight-size fix in werift_sctp_patch.ts, werift counted chunks the peer already had as still in
// flight after a T3-rtx expiry, and once that reached the congestion window it sent nothing more
// with no timer running (seen as a caller with "no bot event for 20 s" while audio flowed).
import "./werift_sctp_patch.ts";
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { longestDeliveryGap, lossySctpPair } from "../../tests/helpers/werift_sctp_pair.ts";

// werift never backs its RTO off (min 1 s), so at 10 % loss a message waits about a second per
// loss of it or its acknowledgement; three in a row is rare, and the caller gives up at 20 s.
const GAP_BOUND_MS = 8_000;

Deno.test({
  name:
    "werift SCTP at 10 % loss each way keeps delivering the worker's messages and counts only chunks on the way as in flight",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    // Seeded loss; 2-chunk messages every 100-700 ms, as a bot's transcript events might be.
    const seeds = Array.from({ length: 20 }, (_, i) => i + 1);
    const rows = await Promise.all(seeds.map(async (seed) => {
      const pair = await lossySctpPair({ seed, loss: 0.1, delayMs: 20 });
      try {
        const gaps = await longestDeliveryGap(pair, 25, {
          everyMs: 100,
          spreadMs: 600,
          bytes: 1500,
          drainMs: 15_000,
        });
        return { seed, ...gaps, flightSize: pair.worker.flightSize as number };
      } finally {
        await pair.close();
      }
    }));
    for (const row of rows) {
      const where = JSON.stringify(row);
      assertEquals(row.received, row.sent, `every message delivered: ${where}`);
      assert(row.drained, `the worker had everything acknowledged: ${where}`);
      // Nothing left to send or acknowledge, so nothing is in flight.
      assertEquals(row.flightSize, 0, `flight size once all is acknowledged: ${where}`);
      assert(row.longestGapMs < GAP_BOUND_MS, `longest gap under ${GAP_BOUND_MS} ms: ${where}`);
    }
  },
});
