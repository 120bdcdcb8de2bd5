// `deno task run`: the whole service on one laptop on its embedded defaults — the database
// (PGlite in ./data unless DATABASE_URL is set), the control plane with the console, one media
// worker as a child process (as it would run on its own node), the example brain, and the demo
// page at `/` with a demo agent and publishable key made for it. The admin token and the demo
// key stay the same across restarts on one data directory, so printed commands and open demo
// tabs keep working; every command printed starts with a Deno its shell can run.
import { openDatabase } from "../db/client.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { loadSettings, type Settings } from "../common/settings.ts";
import { randomBase62 } from "../common/ids.ts";
import { logger } from "../common/log.ts";
import { createApp } from "../api/app.ts";
import { startApiService } from "../api/service.ts";
import { trunkKeyOrCreate } from "./trunk_key_file.ts";
import { buildDemoPage } from "../web/build.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { httpAdminCall } from "./api_client.ts";
import { ensureDemo, type KeptKey } from "./demo_setup.ts";
import { readDemoKey, writeDemoKey } from "./demo_key_file.ts";
import { thisDenoCommand } from "./deno_command.ts";
import { ensureSystemParts } from "./system_parts.ts";
import { serveFolder } from "./static_files.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import { bindUdp } from "../sip/udp.ts";
import { DataDirInUse, lockDataDir } from "./data_dir_lock.ts";
import { bindNamed, checkPortsFree, PortTaken } from "../common/port_taken.ts";
import { type RunAddress, runAddress } from "./run_address.ts";
import { RUN_HELP, runCommand } from "./run_help.ts";
import { StopSignals } from "./ctrl_c.ts";

const log = logger("run");

/** The SIP redirect server's port on a laptop when SIP_REDIRECT_PORT is not set. */
const DEFAULT_SIP_REDIRECT_PORT = 5080;
/** How long stopping may take (the worker ends its calls, then each part closes) before exiting. */
const STOP_LIMIT_MS = 20_000;
/** The worker's SIP port on a laptop when SIP_PORT is not set: where the redirect sends calls. */
const DEFAULT_SIP_PORT = 5070;

/** `port` if it is free for both UDP and TCP on `host`, else one the system finds free. */
async function freeSipPort(host: string, port: number): Promise<number> {
  for (const candidate of [port, 0]) {
    let tcp: Deno.Listener | undefined;
    try {
      tcp = Deno.listen({ hostname: host, port: candidate });
      const chosen = (tcp.addr as Deno.NetAddr).port;
      await (await bindUdp(host, chosen, () => {})).close();
      return chosen;
    } catch {
      // Taken (TCP or UDP): try the next candidate.
    } finally {
      tcp?.close();
    }
  }
  throw new Error("no free port for the worker's SIP");
}

async function waitHealthy(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(url).then((r) => (r.body?.cancel(), r.ok), () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  log.warn("the worker did not become healthy in 60 s", { url });
}

/** BRAIN_PORT: the example brain's port (not a Settings field: only a laptop run has it). */
function brainPortSetting(raw = Deno.env.get("BRAIN_PORT")): number {
  if (!raw) return 8790;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`BRAIN_PORT must be a port number, not "${raw}"`);
  }
  return port;
}

async function start(settings: Settings, address: RunAddress): Promise<void> {
  const host = address.listen;
  // Before anything is read or written: a second run on this folder would share its database
  // and replace its demo key.
  await lockDataDir(settings.dataDir);
  const brainPort = { variable: "BRAIN_PORT", port: brainPortSetting() };
  const apiPort = { variable: "API_PORT", port: settings.apiPort };
  const workerPort = { variable: "WORKER_PORT", port: settings.workerPort };
  await checkPortsFree(host, [apiPort, workerPort]);
  await checkPortsFree("127.0.0.1", [brainPort]);
  if (!await ensureSystemParts((line) => console.error(line))) Deno.exit(1);
  const pageDir = await buildDemoPage();
  const brain = await bindNamed(
    brainPort,
    "127.0.0.1",
    () =>
      createExampleBrain().serve({ hostname: "127.0.0.1", port: brainPort.port, path: "/brain" }),
  );
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
  // Outbound trunk passwords are sealed under this key; kept in ./data, not in the database.
  settings.trunkCredentialsKey ??= await trunkKeyOrCreate(settings.dataDir);
  const api = await startApiService(db, settings);
  const ac = new AbortController();
  let pageConfig = "";
  const server = await bindNamed(apiPort, host, () =>
    Deno.serve(
      { hostname: host, port: settings.apiPort, signal: ac.signal, onListen: () => {} },
      createApp(api.deps, (app) => {
        app.get(
          "/demo-config.js",
          (c) => c.body(pageConfig, 200, { "content-type": "text/javascript" }),
        );
        app.get("/*", serveFolder(pageDir));
      }).fetch,
    ));
  const base = `http://${address.announce}:${server.addr.port}`;
  // Set: that port, or a refusal naming it. Unset: the default if free, else (another run on
  // this machine has it) any free one, printed below.
  const sip = settings.sipRedirectPort !== undefined
    ? await bindNamed(
      { variable: "SIP_REDIRECT_PORT", port: settings.sipRedirectPort },
      host,
      () => startSipRedirect(api.deps, { host, port: settings.sipRedirectPort! }),
      "UDP/TCP",
    )
    : await startSipRedirect(api.deps, { host, port: DEFAULT_SIP_REDIRECT_PORT }).catch((err) => {
      if (!(err instanceof Deno.errors.AddrInUse)) throw err;
      return startSipRedirect(api.deps, { host, port: 0 });
    });
  // The previous run's key, if it still verifies (the database keeps only its hash).
  const stored = await readDemoKey(settings.dataDir);
  const grant = stored ? await api.deps.keys.resolve(stored) : undefined;
  const kept: KeptKey | undefined = stored && grant ? { sessionKey: stored, grant } : undefined;
  const origins = [...new Set([base, `http://127.0.0.1:${server.addr.port}`])];
  const demo = await ensureDemo(httpAdminCall(base, settings.adminToken), brain.url, [
    ...origins,
    `http://localhost:${server.addr.port}`,
  ], kept);
  if (demo.publishableKey !== stored) await writeDemoKey(settings.dataDir, demo.publishableKey);
  pageConfig = `globalThis.CALL_CONFIG = ${
    // No apiUrl: the page calls the API on its own origin, whichever host name was opened.
    JSON.stringify({ publishableKey: demo.publishableKey, agentId: demo.agentId })};\n`;

  const sipPort = settings.sipPort ?? await freeSipPort(host, DEFAULT_SIP_PORT);
  const workerUrl = `http://${address.announce}:${settings.workerPort}`;
  const worker = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../media/main.ts", import.meta.url).pathname],
    env: {
      DATABASE_URL: db.url,
      HOST: host,
      WORKER_PORT: String(settings.workerPort),
      WORKER_PUBLIC_URL: settings.workerPublicUrl ?? workerUrl,
      NODE_ID: settings.nodeId ?? "local-1",
      // Phone calls: the redirect above sends trunks' INVITEs here.
      SIP_PORT: String(sipPort),
      SIP_PUBLIC_ADDRESS: settings.sipPublicAddress ?? address.announce,
      ICE_ADDRESSES: Deno.env.get("ICE_ADDRESSES") || address.announce,
      // The worker's /metrics takes the same admin token as the API's.
      ADMIN_TOKEN: settings.adminToken,
    },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();

  await waitHealthy(`${workerUrl}/healthz`);
  const reach = host === "127.0.0.1"
    ? "this machine only (HOST=0.0.0.0 opens it to the network)"
    : `the network, on ${host} (HOST)`;
  console.log(`
  Voice call service is running (database: ${
    db.embedded ? "embedded PGlite in " + settings.dataDir : "DATABASE_URL"
  }; reachable from ${reach}).

    Open ${base}/ and press Call to talk to the example brain.

    Console:       ${base}/console   (admin token: ${settings.adminToken})
    API:           ${base}/api/v1/
    SIP redirect:  sip:${address.announce}:${sip.port} (UDP and TCP; trunks' INVITEs get 302 to a
                   worker, here sip:${address.announce}:${sipPort}; see docs/phone-numbers.md)
    Example brain: ${brain.url}   (demo agent ${demo.agentId})
    Try a call without a microphone (the caller simulator, with the demo page's key):
      ${thisDenoCommand()} task call --api-url ${base} --key ${demo.publishableKey} --origin ${base} --agent ${demo.agentId} --say "hello there"

  Press Ctrl-C to stop.
`);

  const signals = new StopSignals();
  let stopping = false;
  const killWorker = () => {
    try {
      worker.kill("SIGKILL");
    } catch { /* already gone */ }
  };
  const onSignal = () => {
    const meaning = signals.read(performance.now());
    if (meaning === "stop" && !stopping) return void stop();
    if (meaning === "same press") return; // one Ctrl-C, delivered twice (cli/ctrl_c.ts)
    // A second Ctrl-C, or one while the run already stops on its own: enough waiting.
    log.warn("stopping at once");
    killWorker();
    Deno.exit(130);
  };
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("stopping");
    try {
      // SIGINT: a laptop's worker ends its calls at once instead of draining them (SIGTERM).
      worker.kill("SIGINT");
    } catch { /* already gone */ }
    // Each part closes in turn; one that never does is named, and the run still ends.
    let part = "the worker";
    const deadline = setTimeout(() => {
      log.error("stopping took too long; exiting", { waiting_on: part, after_ms: STOP_LIMIT_MS });
      killWorker();
      Deno.exit(1);
    }, STOP_LIMIT_MS);
    await worker.status;
    part = "the API server";
    ac.abort();
    await server.finished;
    part = "the SIP redirect";
    await sip.close();
    part = "the API's loops";
    await api.close();
    part = "the example brain";
    await brain.shutdown();
    part = "the database";
    await db.close();
    clearTimeout(deadline);
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  worker.status.then((s) => {
    if (!stopping) {
      log.error("worker exited", { code: s.code });
      stop();
    }
  });
}

/** A newcomer's mistake (a bad argument or setting, a second run, a taken port): one clear line. */
function refuse(err: unknown): never {
  console.error(`deno task run: ${err instanceof Error ? err.message : String(err)}`);
  Deno.exit(1);
}

if (import.meta.main) {
  let settings: Settings, address: RunAddress;
  try {
    if (runCommand(Deno.args) === "help") {
      console.log(RUN_HELP);
      Deno.exit(0);
    }
    settings = loadSettings();
    address = runAddress(Deno.env.get("HOST"));
    brainPortSetting(); // a bad value is refused here, before anything starts
  } catch (err) {
    refuse(err);
  }
  await start(settings, address).catch((err) => {
    if (err instanceof DataDirInUse || err instanceof PortTaken) refuse(err);
    throw err;
  });
}
