// `deno task run`: the whole service on one laptop on its embedded defaults — the database
// (PGlite in ./data unless DATABASE_URL is set), the control plane, and one media worker as a
// child process, as it would run on its own node.
import { openDatabase } from "../db/client.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { loadSettings } from "../common/settings.ts";
import { randomBase62 } from "../common/ids.ts";
import { logger } from "../common/log.ts";
import { createApp } from "../api/app.ts";
import { startApiService } from "../api/service.ts";

const log = logger("run");

if (import.meta.main) {
  const settings = loadSettings();
  const db = await openDatabase({
    url: settings.databaseUrl,
    dataDir: `${settings.dataDir}/pglite`,
  });
  // On a laptop the admin token stays the same across restarts.
  settings.adminToken ??= await settingOrCreate(
    db.sql,
    "admin_token",
    () => `adm_${randomBase62(32)}`,
  );
  const api = await startApiService(db, settings);
  const ac = new AbortController();
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: settings.apiPort,
    signal: ac.signal,
    onListen: () => {},
  }, createApp(api.deps).fetch);

  const worker = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../media/main.ts", import.meta.url).pathname],
    env: {
      DATABASE_URL: db.url,
      WORKER_PORT: String(settings.workerPort),
      WORKER_PUBLIC_URL: settings.workerPublicUrl ?? `http://127.0.0.1:${settings.workerPort}`,
      NODE_ID: settings.nodeId ?? "local-1",
      ICE_ADDRESSES: settings.iceAddresses.join(","),
    },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();

  const base = `http://127.0.0.1:${server.addr.port}`;
  console.log(`
  Voice call service is running (database: ${
    db.embedded ? "embedded PGlite in " + settings.dataDir : "DATABASE_URL"
  }).
    API:          ${base}/api/v1/
    Capabilities: ${base}/api/v1/capabilities
    Admin token:  ${settings.adminToken}
  Create an agent:  ADMIN_TOKEN=${settings.adminToken} deno task admin agents create --tenant demo --name Demo --brain-url echo:
  Press Ctrl-C to stop.
`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("stopping");
    try {
      worker.kill("SIGTERM");
    } catch { /* already gone */ }
    await worker.status;
    ac.abort();
    await server.finished;
    await api.close();
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  worker.status.then((s) => {
    if (!stopping) {
      log.error("worker exited", { code: s.code });
      stop();
    }
  });
}
