// How long the worker's data channel to a werift caller goes without delivering, at random loss
// each way: seeded pairs of werift SCTP associations (tests/helpers/werift_sctp_pair.ts), all run
// at once, the worker sending a message every EVERY..EVERY+SPREAD ms for SECS seconds.
//   deno run -A bench/media/sctp_loss_gaps.ts            (with this project's werift patches)
//   UNPATCHED=1 deno run -A bench/media/sctp_loss_gaps.ts (werift as published)
// Env: RUNS (40), SECS (40), LOSS (0.1), EVERY (100), SPREAD (600), BYTES (1500), DELAY_MS (20).
import { longestDeliveryGap, lossySctpPair } from "../../tests/helpers/werift_sctp_pair.ts";

const env = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
if (!Deno.env.get("UNPATCHED")) await import("../../media/rtc/werift_sctp_patch.ts");
const runs = env("RUNS", 40), seconds = env("SECS", 40), loss = env("LOSS", 0.1);
const results = await Promise.all(Array.from({ length: runs }, async (_, i) => {
  const pair = await lossySctpPair({ seed: i + 1, loss, delayMs: env("DELAY_MS", 20) });
  const gaps = await longestDeliveryGap(pair, seconds, {
    everyMs: env("EVERY", 100),
    spreadMs: env("SPREAD", 600),
    bytes: env("BYTES", 1500),
    drainMs: 10_000,
  });
  const w = pair.worker;
  // Bytes werift counts in flight beyond the chunks really on the way (sent, not acked, not due again).
  const onTheWay = w.sentQueue
    .filter((c: { acked: boolean; retransmit: boolean; abandoned: boolean }) =>
      !c.acked && !c.retransmit && !c.abandoned
    )
    .reduce((n: number, c: { bookSize: number }) => n + c.bookSize, 0);
  const row = { seed: i + 1, ...gaps, excessFlight: w.flightSize - onTheWay, cwnd: w.cwnd };
  await pair.close();
  return row;
}));
for (const row of results) console.log(JSON.stringify(row));
const count = (f: (r: typeof results[number]) => boolean) => results.filter(f).length;
console.log(
  `${
    Deno.env.get("UNPATCHED") ? "werift as published" : "patched"
  }: ${runs} runs of ${seconds} s at ` +
    `${loss * 100} % loss each way: longest gap > 2 s in ${count((r) => r.longestGapMs > 2000)}, ` +
    `> 5 s in ${count((r) => r.longestGapMs > 5000)}, > 10 s in ${
      count((r) => r.longestGapMs > 10000)
    }; ` +
    `not all delivered in ${
      count((r) => r.received < r.sent)
    }; flight size counting acknowledged ` +
    `bytes in ${count((r) => r.excessFlight !== 0)}; max gap ${
      Math.max(...results.map((r) => r.longestGapMs))
    } ms`,
);
