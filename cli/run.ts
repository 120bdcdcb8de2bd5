// `deno task run`: the whole service on one laptop on its embedded defaults — the database
// (PGlite in ./data unless DATABASE_URL is set), the control plane with the console, one media
// worker as a child process (as it would run on its own node), the example brain, and the demo
// page at `/` with a demo agent and publishable key made for it. The admin token and the demo
// key stay the same across restarts on one data directory, so printed commands and open demo
// tabs keep working; every command printed starts with a Deno its shell can run.
import { openDatabase } from "../db/client.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { loadSettings } from "../common/settings.ts";
import { randomBase62 } from "../common/ids.ts";
import { logger } from "../common/log.ts";
import { createApp } from "../api/app.ts";
import { startApiService } from "../api/service.ts";
import { buildDemoPage } from "../web/build.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { httpAdminCall } from "./api_client.ts";
import { ensureDemo, type KeptKey } from "./demo_setup.ts";
import { readDemoKey, writeDemoKey } from "./demo_key_file.ts";
import { thisDenoCommand } from "./deno_command.ts";
import { ensureSystemParts } from "./system_parts.ts";
import { serveFolder } from "./static_files.ts";
import { startSipRedirect } from "../api/sip/start.ts";

const log = logger("run");

/** The SIP redirect server's port on a laptop when SIP_REDIRECT_PORT is not set. */
const DEFAULT_SIP_REDIRECT_PORT = 5080;

async function waitHealthy(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(url).then((r) => (r.body?.cancel(), r.ok), () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  log.warn("the worker did not become healthy in 60 s", { url });
}

if (import.meta.main) {
  const settings = loadSettings();
  if (!await ensureSystemParts((line) => console.error(line))) Deno.exit(1);
  const pageDir = await buildDemoPage();
  const brain = createExampleBrain().serve({
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("BRAIN_PORT") ?? 8790),
    path: "/brain",
  });
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
  let pageConfig = "";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: settings.apiPort, signal: ac.signal, onListen: () => {} },
    createApp(api.deps, (app) => {
      app.get(
        "/demo-config.js",
        (c) => c.body(pageConfig, 200, { "content-type": "text/javascript" }),
      );
      app.get("/*", serveFolder(pageDir));
    }).fetch,
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const sip = await startSipRedirect(api.deps, {
    host: "127.0.0.1",
    port: settings.sipRedirectPort ?? DEFAULT_SIP_REDIRECT_PORT,
  }).catch((err) => {
    // The default port taken (another run on this machine): any free one, printed below. A port
    // the operator set is theirs to fix.
    if (settings.sipRedirectPort !== undefined || !(err instanceof Deno.errors.AddrInUse)) {
      throw err;
    }
    return startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });
  });
  // The previous run's key, if it still verifies (the database keeps only its hash).
  const stored = await readDemoKey(settings.dataDir);
  const grant = stored ? await api.deps.keys.resolve(stored) : undefined;
  const kept: KeptKey | undefined = stored && grant ? { sessionKey: stored, grant } : undefined;
  const demo = await ensureDemo(httpAdminCall(base, settings.adminToken), brain.url, [
    base,
    `http://localhost:${server.addr.port}`,
  ], kept);
  if (demo.publishableKey !== stored) await writeDemoKey(settings.dataDir, demo.publishableKey);
  pageConfig = `globalThis.CALL_CONFIG = ${
    // No apiUrl: the page calls the API on its own origin, whichever host name was opened.
    JSON.stringify({ publishableKey: demo.publishableKey, agentId: demo.agentId })};\n`;

  const worker = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../media/main.ts", import.meta.url).pathname],
    env: {
      DATABASE_URL: db.url,
      WORKER_PORT: String(settings.workerPort),
      WORKER_PUBLIC_URL: settings.workerPublicUrl ?? `http://127.0.0.1:${settings.workerPort}`,
      NODE_ID: settings.nodeId ?? "local-1",
      ICE_ADDRESSES: settings.iceAddresses.join(","),
      // The worker's /metrics takes the same admin token as the API's.
      ADMIN_TOKEN: settings.adminToken,
    },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();

  const workerReady = waitHealthy(`http://127.0.0.1:${settings.workerPort}/healthz`);
  await workerReady;
  console.log(`
  Voice call service is running (database: ${
    db.embedded ? "embedded PGlite in " + settings.dataDir : "DATABASE_URL"
  }).

    Open ${base}/ and press Call to talk to the example brain.

    Console:       ${base}/console   (admin token: ${settings.adminToken})
    API:           ${base}/api/v1/
    SIP redirect:  sip:127.0.0.1:${sip.port} (UDP and TCP; trunks' INVITEs get 302 to a worker,
                   see docs/phone-numbers.md)
    Example brain: ${brain.url}   (demo agent ${demo.agentId})
    Try a call without a microphone (the caller simulator, with the demo page's key):
      ${thisDenoCommand()} task call --api ${base} --key ${demo.publishableKey} --origin ${base} --agent ${demo.agentId} --say "hello there"

  Press Ctrl-C to stop.
`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("stopping");
    try {
      // SIGINT: a laptop's worker ends its calls at once instead of draining them (SIGTERM).
      worker.kill("SIGINT");
    } catch { /* already gone */ }
    await worker.status;
    ac.abort();
    await server.finished;
    await sip.close();
    await api.close();
    await brain.shutdown();
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
