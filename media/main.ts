// `deno task worker`: one media worker node. Registers and heartbeats its node, serves the
// offer endpoint sessions.connect hands out, and runs the calls that arrive. With
// WORKER_PROCESSES above 1 (or `auto`) it is the supervisor of that many call runners, each this
// same script as a worker of its own (media/node/runners.ts).
import { loadSettings, type Settings } from "../common/settings.ts";
import { logger, setLogFormat } from "../common/log.ts";
import {
  planRunners,
  recognitionThreads,
  RUNNER_INDEX_VAR,
  runnerCount,
  superviseRunners,
} from "./node/runners.ts";

const log = logger("worker");

if (import.meta.main) {
  const settings = loadSettings();
  setLogFormat(settings.logFormat);
  if (!settings.databaseUrl) {
    console.error(
      "The worker needs DATABASE_URL (the control plane's database). `deno task run` sets it up.",
    );
    Deno.exit(2);
  }
  const cores = navigator.hardwareConcurrency || 1;
  const runners = runnerCount(settings.workerProcesses, cores);
  const runnerIndex = Deno.env.get(RUNNER_INDEX_VAR);
  if (runnerIndex === undefined && runners > 1) await supervise(settings, cores);
  else {
    // Only a process that runs calls loads the media stack (the supervisor stays small).
    const { runWorker } = await import("./node/worker_process.ts");
    await runWorker(settings, runnerIndex, runners, cores);
  }
}

/** The supervisor: starts the runners, restarts the ones that die, drains them all on a signal. */
async function supervise(settings: Settings, cores: number): Promise<never> {
  const plans = planRunners(settings, cores);
  log.info("starting call runners", {
    runners: plans.length,
    cores,
    capacity_each: plans[0].capacity,
    capacity_set: settings.workerCapacitySet,
    call_cost_cores: settings.workerCallCostCores,
    recognition_threads_each: recognitionThreads(plans.length),
  });
  const supervisor = superviseRunners(plans, {
    script: new URL(import.meta.url).pathname,
    env: Deno.env.toObject(),
  });
  Deno.addSignalListener("SIGINT", () => supervisor.stop("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => supervisor.stop("SIGTERM"));
  const code = await supervisor.done;
  log.info("runners ended", { code });
  Deno.exit(code);
}
