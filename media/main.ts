// `deno task worker`: one media worker node. Registers its node and heartbeats it; the offer
// endpoint and the call pipeline hang off this process.
import { openDatabase } from "../db/client.ts";
import { loadSettings } from "../common/settings.ts";
import { logger } from "../common/log.ts";
import { registerWorkerNode } from "./node/registration.ts";

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
  const ac = new AbortController();
  const server = Deno.serve({
    hostname: "0.0.0.0",
    port,
    signal: ac.signal,
    onListen: ({ port }) => log.info("listening", { node_id: nodeId, port }),
  }, (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true, node_id: nodeId });
    return Response.json({ error: { code: "not_found", message: "No such route.", details: {} } }, {
      status: 404,
    });
  });
  const registration = await registerWorkerNode(db.sql, {
    node_id: nodeId,
    offer_base_url: settings.workerPublicUrl ?? `http://127.0.0.1:${port}`,
    capacity: settings.workerCapacity,
  });
  const stop = async () => {
    await registration.stop();
    ac.abort();
    await server.finished;
    await db.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
