// `deno task api`: one API process (control plane) on API_PORT.
import { openDatabase } from "../db/client.ts";
import { loadSettings } from "../common/settings.ts";
import { logger, setLogFormat } from "../common/log.ts";
import { startMetricsListener } from "../common/metrics/listener.ts";
import { createApp } from "./app.ts";
import { startApiService } from "./service.ts";
import { countInFlight } from "../common/http/in_flight.ts";
import { startSipRedirect } from "./sip/start.ts";
import { exitIfPortsTaken } from "../common/port_taken.ts";
import { TRUNK_CREDENTIALS_KEY } from "../common/sealed.ts";

const log = logger("api");

if (import.meta.main) {
  const settings = loadSettings();
  setLogFormat(settings.logFormat);
  // A taken port is named with its variable before the database opens or anything starts.
  await exitIfPortsTaken(settings.host, [
    { variable: "API_PORT", port: settings.apiPort },
    ...(settings.metricsPort === undefined
      ? []
      : [{ variable: "METRICS_PORT", port: settings.metricsPort }]),
  ], "api");
  const db = await openDatabase({
    url: settings.databaseUrl,
    dataDir: `${settings.dataDir}/pglite`,
  });
  const service = await startApiService(db, settings).catch((err) => {
    // A missing or wrong TRUNK_CREDENTIALS_KEY is the operator's to fix: say so, without a stack.
    if (!(err as Error).message?.includes(TRUNK_CREDENTIALS_KEY)) throw err;
    console.error(`api: ${(err as Error).message}`);
    Deno.exit(1);
  });
  const metrics = settings.metricsPort === undefined ? undefined : startMetricsListener({
    hostname: settings.host,
    port: settings.metricsPort,
    registry: service.deps.metrics.registry,
  });
  const sip = settings.sipRedirectPort === undefined
    ? undefined
    : await startSipRedirect(service.deps, { host: settings.host, port: settings.sipRedirectPort });
  if (sip) log.info("SIP redirect server listening", { port: sip.port, transports: "udp,tcp" });
  let stopping = false;
  // Ready while it takes requests; a load balancer stops sending once it answers 503.
  const app = createApp(
    service.deps,
    (app) => app.get("/readyz", (c) => c.json({ ready: !stopping }, stopping ? 503 : 200)),
  );
  const requests = countInFlight(app.fetch);
  const server = Deno.serve({
    hostname: settings.host,
    port: settings.apiPort,
    onListen: ({ port }) =>
      log.info("listening", { port, database: db.embedded ? "embedded" : "external" }),
  }, requests.fetch);
  if (!settings.adminToken) {
    console.log(`ADMIN_TOKEN not set; this process's admin token: ${service.deps.adminToken}`);
  }
  // SIGTERM: stop accepting connections, finish the requests in flight, then close.
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("stopping: finishing the requests in flight", { requests: requests.count });
    // Still accepting while the requests in flight finish (at most 30 s): shutdown() would cut a
    // body that is still arriving. Readiness already says 503, so a balancer sends no new ones.
    await requests.idle(30_000);
    await server.shutdown();
    await sip?.close();
    await metrics?.close();
    await service.close();
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
