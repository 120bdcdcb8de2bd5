// The caller simulator (`deno task call`) against the whole service (API, worker process, the
// example brain) under its own `--loss`/`--jitter`: per run one call with two spoken turns;
// completed = exit 0 (greeting, both turns heard and answered). The loss is on the simulator's
// sockets from its first packet, seeded per call, so a run repeats.
// Run: deno run -A bench/media/simulator_loss.ts
// Environment: BENCH_SIM_CONDITIONS (default "10;20;5,4"; each is --loss's value, "+JMS" adds
// --jitter, e.g. "10+30"), BENCH_SIM_RUNS (default 5).
import { startCallService } from "../../tests/helpers/call_harness.ts";
import { createExampleBrain } from "../../sdk/brain/example/brain.ts";
import { runCall } from "../../cli/call.ts";

const conditions = (Deno.env.get("BENCH_SIM_CONDITIONS") ?? "10;20;5,4").split(";");
const runs = Number(Deno.env.get("BENCH_SIM_RUNS") ?? 5);

const service = await startCallService(createExampleBrain());
try {
  for (const condition of conditions) {
    const [loss, jitter] = condition.split("+");
    const args = ["--loss", loss, ...(jitter ? ["--jitter", jitter] : [])];
    let completed = 0;
    const failures: string[] = [];
    for (let run = 0; run < runs; run++) {
      const lines: string[] = [];
      const code = await runCall(
        [
          ...args,
          "--seed",
          String(run + 1),
          "--say",
          "hello there how are you",
          "--say",
          "what is the weather like today",
        ],
        {
          VOICE_API_URL: service.api.url,
          VOICE_KEY: service.tenant.sk,
          VOICE_AGENT: service.tenant.agent_id,
        },
        { out: (l) => lines.push(l), err: (l) => lines.push(l) },
      );
      if (code === 0) completed++;
      else failures.push(lines.find((l) => l.startsWith("FAILED")) ?? `exit ${code}`);
    }
    console.log(`${args.join(" ")}: completed ${completed}/${runs}`);
    for (const f of failures) console.log(`  ${f}`);
  }
} finally {
  await service.close();
}
Deno.exit(0);
