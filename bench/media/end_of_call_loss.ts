// Whether a call's last messages reach the caller under random loss: per run, a test caller dials
// the in-process service (tests/helpers/call_harness.ts), hears the greeting, then its link loses
// packets at the given rate in both directions (tests/helpers/lossy_link.ts, on the caller's own
// sockets: STUN, DTLS/SCTP and RTP alike) and it asks the bot to leave (disconnect-bot). A run
// counts as delivered when both the call-ended notice and peerLeft arrive within 12 s.
// Run: deno run -A bench/media/end_of_call_loss.ts
// Environment: BENCH_LOSS_RATES (default "0.1,0.2"), BENCH_LOSS_RUNS (default 8).
import { startInProcessCallService } from "../../tests/helpers/call_harness.ts";
import { LossyLink } from "../../tests/helpers/lossy_link.ts";
import { rawBrain } from "../../tests/helpers/raw_brain.ts";
import { readCallEnded } from "../../proto/rtvi.ts";

const rates = (Deno.env.get("BENCH_LOSS_RATES") ?? "0.1,0.2").split(",").map(Number);
const runs = Number(Deno.env.get("BENCH_LOSS_RUNS") ?? 8);

const brain = rawBrain(async (call) => {
  await call.next("session_start");
  call.send("greeting", { text: "Hello." });
});
const service = await startInProcessCallService(brain);
try {
  for (const rate of rates) {
    let delivered = 0;
    const drains: number[] = [];
    for (let run = 0; run < runs; run++) {
      const { caller, sessionId } = await service.call();
      try {
        await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
        const link = new LossyLink(run + 1);
        link.attach(caller.pc);
        link.setLoss(rate);
        caller.sendRtvi("disconnect-bot");
        const got = await Promise.all([
          caller.waitForMessage(
            (m) => m.type === "server-message" && readCallEnded(m.data) !== undefined,
            12_000,
          ),
          caller.waitForMessage(
            (m) => m.type === "signalling" && (m.message as { type?: string })?.type === "peerLeft",
            12_000,
          ),
        ]).then(() => true, () => false);
        if (got) delivered++;
        const record = await service.record(sessionId, "ended", 20_000);
        const last = record.log.find((e: { kind: string }) => e.kind === "last_messages");
        if (last) drains.push(last.data.ms);
      } finally {
        await caller.hangUp();
      }
    }
    const wait = drains.length ? `; worker waited ${drains.join(", ")} ms for the acks` : "";
    console.log(`${rate * 100} % loss: last messages delivered in ${delivered} of ${runs}${wait}`);
  }
} finally {
  await service.close();
}
