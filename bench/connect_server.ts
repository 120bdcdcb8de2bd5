// The API under load, in its own process so the load generator's CPU is not counted against it.
// Run by bench/connect.ts: DATABASE_URL names an already created database; prints one JSON line
// {port, admin_token} once listening, and exits when stdin closes or on SIGTERM.
import { createApp } from "../api/app.ts";
import { startApiService } from "../api/service.ts";
import { loadSettings } from "../common/settings.ts";
import { setQuiet } from "../common/log.ts";
import { openDatabase } from "../db/client.ts";

const url = Deno.env.get("DATABASE_URL");
if (!url) throw new Error("connect_server: DATABASE_URL is required");

setQuiet(true);
// A production-like pool; migrations run here so the schema is the API's own.
const db = await openDatabase({ url, max: Number(Deno.env.get("BENCH_POOL") ?? 10) });
const settings = loadSettings({
  ...Deno.env.toObject(),
  ADMIN_TOKEN: Deno.env.get("ADMIN_TOKEN") ?? "adm_bench_token_0123456789",
  // The limiter would refuse almost everything from one key at benchmark rates.
  RATE_LIMIT_PER_SECOND: "0",
  PENDING_SESSIONS_PER_KEY: "0", // connects that never offer, by design
});
const service = await startApiService(db, settings);
const app = createApp(service.deps, (a) => {
  // The baseline: same Hono app, middleware and server, no auth, parse, database or signing.
  a.get("/bench/bare", (c) => c.json({ ok: true, at: 1 }));
  a.post("/bench/bare", (c) => c.json({ ok: true, at: 1 }));
});

const ac = new AbortController();
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
  app.fetch,
);
console.log(JSON.stringify({ port: server.addr.port, admin_token: service.deps.adminToken }));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  ac.abort();
  await server.finished;
  await service.close();
  await db.close();
  Deno.exit(0);
}
Deno.addSignalListener("SIGTERM", stop);
Deno.addSignalListener("SIGINT", stop);
// The parent holds stdin open; when it goes away (even by crashing), so does this server.
(async () => {
  const buf = new Uint8Array(64);
  while ((await Deno.stdin.read(buf)) !== null) { /* nothing is sent; wait for EOF */ }
  await stop();
})();
