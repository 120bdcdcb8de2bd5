// One worker process: the whole node (WORKER_PROCESSES=1), or one call runner of a supervised
// node (WORKER_RUNNER_INDEX set). Loads the engines, registers and heartbeats its node, serves
// offers, runs calls, and drains on SIGTERM. Imported by media/main.ts only where it runs calls,
// so a supervisor does not load the media stack.
import { RecordingUploader } from "../call/recording_store.ts";
import { loadTelephonySettings } from "../../common/telephony_settings.ts";
import { openDatabase } from "../../db/client.ts";
import type { Settings } from "../../common/settings.ts";
import { logger } from "../../common/log.ts";
import { startMetricsListener } from "../../common/metrics/listener.ts";
import { WorkerMetrics } from "./metrics.ts";
import { TokenVerifier } from "../../common/token.ts";
import { signingJwk } from "../../db/signing_key.ts";
import { registerWorkerNode } from "./registration.ts";
import { createWorkerApp, type WorkerContext } from "../worker.ts";
import { startSpeechEngines } from "../engines/start.ts";
import { warmEngines } from "./warm_up.ts";
import { loadSpeechConfig } from "../engines/speech_config.ts";
import { drainCalls } from "./drain.ts";
import { countInFlight } from "../../common/http/in_flight.ts";
import { recognitionThreads, runnerCapacities, supervisorGone } from "./runners.ts";
import { brainLimits } from "../brain/limits.ts";
import { releaseFreedMemoryEvery } from "../../common/freed_memory.ts";
import { exitIfPortsTaken } from "../../common/port_taken.ts";
import { sipAnnouncedAddress, startSipPhones } from "../sip/phone_service.ts";
import { shutdownTracing } from "../trace/tracing.ts";

const log = logger("worker");

/** One worker: the whole node (one process), or runner `runnerIndex` of a supervised node. */
export async function runWorker(
  settings: Settings,
  runnerIndex: string | undefined,
  runners: number,
  cores: number,
): Promise<void> {
  const port = settings.workerPort;
  // A taken port is named with its variable before anything registers or starts.
  await exitIfPortsTaken(settings.host, [
    { variable: "WORKER_PORT", port },
    ...(settings.metricsPort === undefined
      ? []
      : [{ variable: "METRICS_PORT", port: settings.metricsPort }]),
  ], "worker");
  const db = await openDatabase({ url: settings.databaseUrl, max: 4 });
  brainLimits.unresponsiveMs = settings.brainUnresponsiveSeconds * 1000;
  const nodeId = settings.nodeId ?? `node-${Deno.hostname()}-${port}`;
  // The engines load before the node registers, so no call is routed here before it can speak.
  const env = (name: string) => Deno.env.get(name);
  // A runner's capacity comes from the supervisor (WORKER_CAPACITY); one process derives its own
  // only with WORKER_PROCESSES=auto on a one-core machine.
  const capacity = runnerIndex === undefined
    ? runnerCapacities(settings, 1, cores)[0]
    : settings.workerCapacity;
  const threads = runnerIndex === undefined ? undefined : recognitionThreads(runners);
  const engines = await loadSpeechConfig(env).then((config) => {
    // Unless the speech config sets them, a runner of several starts one recognition thread.
    if (threads !== undefined && config.recognition.includes("pocketsphinx")) {
      config.options.pocketsphinx = { threads, ...config.options.pocketsphinx };
    }
    return startSpeechEngines(config, env, {
      coolDownMs: settings.speechEngineCoolDownSeconds * 1000,
    });
  })
    .catch((err) => {
      console.error(`The speech engines could not start: ${(err as Error).message}`);
      Deno.exit(3);
    });
  log.info("speech engines", {
    recognition: engines.recognition.engines.map((e) => e.name).join(" "),
    synthesis: engines.synthesis.engines.map((e) => e.name).join(" "),
    // Before the node registers: its first call is as quick as its later ones (warm_up.ts).
    warmed_ms: Math.round(await warmEngines(engines, log)),
  });
  // Without it, what calls free stays resident in glibc's arenas and the worker's RSS ratchets up
  // (bench/media/README.md, soak).
  if (settings.memoryReleaseSeconds > 0) {
    releaseFreedMemoryEvery(settings.memoryReleaseSeconds * 1000);
  }
  // Each call holds one UDP (and, with ICE_TCP, one TCP) port of RTC_PORTS for its whole length.
  const rtcSpan = settings.rtcPorts && settings.rtcPorts.last - settings.rtcPorts.first + 1;
  if (rtcSpan !== undefined && rtcSpan < capacity) {
    log.warn("RTC_PORTS holds fewer ports than calls", { ports: rtcSpan, capacity });
  }
  const metrics = new WorkerMetrics();
  const context: WorkerContext = {
    metrics,
    adminToken: settings.adminToken,
    capacity,
    sql: db.sql,
    nodeId,
    verifier: await TokenVerifier.fromJwk(await signingJwk(db, settings)),
    iceAddresses: settings.iceAddresses,
    iceTcp: settings.iceTcp,
    icePortRange: settings.rtcPorts && [settings.rtcPorts.first, settings.rtcPorts.last],
    calls: new Map(),
    engines,
    recordingsDir: settings.recordingsDir,
    endOfTurn: settings.endOfTurn,
    telephony: loadTelephonySettings(),
  };
  const requests = countInFlight(createWorkerApp(context).fetch);
  const server = Deno.serve({
    hostname: settings.host,
    port,
    onListen: ({ port }) => log.info("listening", { node_id: nodeId, port }),
  }, requests.fetch);
  const metricsListener = settings.metricsPort === undefined ? undefined : startMetricsListener({
    hostname: settings.host,
    port: settings.metricsPort,
    registry: metrics.registry,
  });
  // Phone calls over SIP (SIP_PORT), admitted by the session tokens the control plane's redirect
  // hands out. A supervised node's runners each have their own (SIP_PORT + index, runners.ts).
  const sipAddress = sipAnnouncedAddress(settings);
  const sip = settings.sipPort === undefined ? undefined : await startSipPhones(
    context, // the live context: admission sees `draining` once the drain begins
    {
      host: settings.host,
      port: settings.sipPort,
      publicAddress: sipAddress,
      rtpPorts: settings.rtpPorts,
      rtpSymmetric: settings.rtpSymmetric,
      rtpTimeoutSeconds: settings.rtpTimeoutSeconds,
    },
    (call) => metrics.track(call),
  );
  context.dialler = sip?.dialler;
  const registered = engines.serves;
  const registration = await registerWorkerNode(db.sql, {
    node_id: nodeId,
    offer_base_url: settings.workerPublicUrl ?? `http://127.0.0.1:${port}`,
    capacity,
    serves: registered,
    sip_address: sip ? sipAddress : null,
    sip_port: sip?.port ?? null,
  });
  // Issue 37: recordings of agents with a bucket are uploaded from here (media/call/recording_store.ts).
  const uploader = new RecordingUploader({ sql: db.sql, recordingsDir: settings.recordingsDir });
  uploader.start();
  // A provider engine went down or came back: the node advertises what it serves now (and at
  // once if that changed while the node was registering).
  engines.health?.onChange(() => void registration.setServes(engines.serves));
  if (JSON.stringify(engines.serves) !== JSON.stringify(registered)) {
    void registration.setServes(engines.serves);
  }
  // SIGTERM drains: no new calls, the calls in flight run until they end or the drain timeout
  // passes, then exit 0. SIGINT (Ctrl-C on a laptop), or a second signal, ends the calls at once.
  let stopping = false;
  const hurry = new AbortController();
  const stop = async (signal: "SIGTERM" | "SIGINT") => {
    if (stopping) return hurry.abort();
    stopping = true;
    context.draining = true;
    await registration.setDraining(true).catch(() => {});
    const timeoutMs = signal === "SIGTERM" ? settings.drainTimeoutSeconds * 1000 : 0;
    log.info("draining", { node_id: nodeId, calls: context.calls.size, timeout_ms: timeoutMs });
    const drained = await drainCalls(context.calls, timeoutMs, hurry.signal);
    log.info("drained", {
      node_id: nodeId,
      ended_by_themselves: drained.endedByThemselves,
      ended_at_deadline: drained.endedAtDeadline,
      waited_ms: drained.waitedMs,
    });
    await shutdownTracing(); // the last calls' spans go out (bounded by the exporter's timeout)
    await registration.stop();
    await uploader.stop();
    await sip?.close();
    await engines.close();
    await requests.idle(10_000);
    await server.shutdown();
    await metricsListener?.close();
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", () => stop("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => stop("SIGTERM"));
  // A runner whose supervisor is gone (even killed) drains and exits rather than run unsupervised.
  if (runnerIndex !== undefined) void supervisorGone().then(() => stop("SIGTERM"));
}
