// `deno task worker`: one media worker node. Registers and heartbeats its node, serves the
// offer endpoint sessions.connect hands out, and runs the calls that arrive.
import { openDatabase } from "../db/client.ts";
import { loadSettings } from "../common/settings.ts";
import { logger } from "../common/log.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../common/signing_key.ts";
import { registerWorkerNode } from "./node/registration.ts";
import { createWorkerApp, type WorkerContext } from "./worker.ts";
import { startSpeechEngines } from "./engines/start.ts";
import { loadSpeechConfig } from "./engines/speech_config.ts";

const log = logger("worker");

if (import.meta.main) {
  const settings = loadSettings();
  if (!settings.databaseUrl) {
    console.error(
      "The worker needs DATABASE_URL (the control plane's database). `deno task run` sets it up.",
    );
    Deno.exit(2);
  }
  const db = await openDatabase({ url: settings.databaseUrl, max: 4 });
  const port = settings.workerPort;
  const nodeId = settings.nodeId ?? `node-${Deno.hostname()}-${port}`;
  // The engines load before the node registers, so no call is routed here before it can speak.
  const env = (name: string) => Deno.env.get(name);
  const engines = await loadSpeechConfig(env).then((config) => startSpeechEngines(config, env))
    .catch((err) => {
      console.error(`The speech engines could not start: ${(err as Error).message}`);
      Deno.exit(3);
    });
  log.info("speech engines", {
    recognition: engines.recognition.engines.map((e) => e.name).join(" "),
    synthesis: engines.synthesis.engines.map((e) => e.name).join(" "),
  });
  const context: WorkerContext = {
    sql: db.sql,
    nodeId,
    verifier: await TokenVerifier.fromJwk(await signingJwk(db, settings)),
    iceAddresses: settings.iceAddresses,
    calls: new Map(),
    engines,
    recordingsDir: settings.recordingsDir,
  };
  const ac = new AbortController();
  const server = Deno.serve({
    hostname: settings.host,
    port,
    signal: ac.signal,
    onListen: ({ port }) => log.info("listening", { node_id: nodeId, port }),
  }, createWorkerApp(context).fetch);
  const registration = await registerWorkerNode(db.sql, {
    node_id: nodeId,
    offer_base_url: settings.workerPublicUrl ?? `http://127.0.0.1:${port}`,
    capacity: settings.workerCapacity,
    serves: engines.serves,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await registration.setDraining(true).catch(() => {});
    await Promise.all([...context.calls.values()].map((c) => c.end("ended", "worker_shutdown")));
    await registration.stop();
    await engines.close();
    ac.abort();
    await server.finished;
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
