// `deno task api`: one API process (control plane) on API_PORT.
import { openDatabase } from "../db/client.ts";
import { loadSettings } from "../common/settings.ts";
import { logger } from "../common/log.ts";
import { createApp } from "./app.ts";
import { startApiService } from "./service.ts";

const log = logger("api");

if (import.meta.main) {
  const settings = loadSettings();
  const db = await openDatabase({
    url: settings.databaseUrl,
    dataDir: `${settings.dataDir}/pglite`,
  });
  const service = await startApiService(db, settings);
  const app = createApp(service.deps);
  const ac = new AbortController();
  const server = Deno.serve({
    hostname: settings.host,
    port: settings.apiPort,
    signal: ac.signal,
    onListen: ({ port }) =>
      log.info("listening", { port, database: db.embedded ? "embedded" : "external" }),
  }, app.fetch);
  if (!settings.adminToken) {
    console.log(`ADMIN_TOKEN not set; this process's admin token: ${service.deps.adminToken}`);
  }
  const stop = async () => {
    ac.abort();
    await server.finished;
    await service.close();
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
