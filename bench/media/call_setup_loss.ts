// Whether a werift test caller's call opens and completes its greeting under random loss from
// its first packet: per run, the caller dials the in-process service with a lossy link
// (tests/helpers/lossy_link.ts, seeded by the run) on its own sockets from the moment they exist,
// so ICE checks, the DTLS handshake, SCTP's INIT/COOKIE and DATA_CHANNEL_OPEN, the RTVI exchange
// and the greeting's audio all cross it. Opened = the chat channel opens within 20 s; completed =
// bot-ready and then the greeting's bot-stopped-speaking arrive, 20 s each.
// Run: deno run -A bench/media/call_setup_loss.ts
// Environment: BENCH_LOSS_RATES (default "0.1,0.2"), BENCH_LOSS_RUNS (default 10).
import { startInProcessCallService } from "../../tests/helpers/call_harness.ts";
import { LossyLink } from "../../tests/helpers/lossy_link.ts";
import { rawBrain } from "../../tests/helpers/raw_brain.ts";
import { TestCaller } from "../../caller/caller.ts";
import { median } from "../harness/stats.ts";

const rates = (Deno.env.get("BENCH_LOSS_RATES") ?? "0.1,0.2").split(",").map(Number);
const runs = Number(Deno.env.get("BENCH_LOSS_RUNS") ?? 10);

const brain = rawBrain(async (call) => {
  await call.next("session_start");
  call.send("greeting", { text: "Hello there, this is a greeting of a few words." });
});
const service = await startInProcessCallService(brain);
try {
  for (const rate of rates) {
    let opened = 0, completed = 0;
    const openMs: number[] = [];
    for (let run = 1; run <= runs; run++) {
      const r = await service.api.post(
        "/api/v1/sessions.connect",
        { agent_id: service.tenant.agent_id },
        service.tenant.sk,
      );
      const link = new LossyLink(run * 7919);
      link.setLoss(rate);
      const t0 = performance.now();
      const caller = await TestCaller.connect({
        offerUrl: r.body.webrtc_request_params.endpoint,
        headers: r.body.webrtc_request_params.headers,
        onSockets: (pc) => link.attach(pc),
      });
      let stage = "open";
      try {
        await caller.waitOpen(20_000);
        opened++;
        openMs.push(performance.now() - t0);
        stage = "bot-ready";
        caller.sendClientReady();
        await caller.waitForMessage((m) => m.type === "bot-ready", 20_000);
        caller.openMicrophone();
        stage = "greeting";
        await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 20_000);
        completed++;
        stage = "done";
      } catch {
        // counted below by stage
      }
      console.log(JSON.stringify({ rate, run, stage, dropped: link.counts.dropped }));
      await caller.hangUp();
    }
    const mid = openMs.length ? Math.round(median(openMs)) : null;
    console.log(
      `loss ${rate * 100} %: opened ${opened}/${runs}, completed ${completed}/${runs}, ` +
        `open median ${mid} ms, max ${openMs.length ? Math.round(Math.max(...openMs)) : null} ms`,
    );
  }
} finally {
  await service.close();
}
Deno.exit(0);
