// SIGTERM on an API process finishes the requests in flight before it exits: a request whose body
// is still arriving when the signal comes is answered in full (and its effect written), and the
// process then exits 0.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freshDatabase } from "./helpers/database.ts";
import { freePort, spawnDeno, waitHealthy } from "./helpers/process.ts";

Deno.test("an API process finishes the request in flight on SIGTERM, then exits 0", async () => {
  const db = await freshDatabase();
  const port = freePort();
  const token = "adm_sigterm_test_0123456789";
  const api = spawnDeno("api/main.ts", {
    DATABASE_URL: db.url,
    API_PORT: String(port),
    ADMIN_TOKEN: token,
  });
  try {
    await waitHealthy(`http://127.0.0.1:${port}/readyz`, api);
    const body = JSON.stringify({ tenant: "acme", name: "InFlight", brain_url: "echo:" });
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const enc = new TextEncoder();
    await conn.write(enc.encode(
      `POST /api/v1/agents.create HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n` + body.slice(0, 10),
    ));
    await new Promise((r) => setTimeout(r, 300)); // the server is reading the body
    api.process.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    await conn.write(enc.encode(body.slice(10)));
    let reply = "";
    const buf = new Uint8Array(16384);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      reply += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
    assertMatch(
      reply,
      /^HTTP\/1\.1 200/,
      `the request in flight is answered: ${reply}\n${api.output()}`,
    );
    assertMatch(reply, /"name":"InFlight"/);
    const status = await api.process.status;
    assertEquals(status.code, 0, api.output());
    const rows = await db.sql`select 1 from agents where name = 'InFlight'`;
    assert(rows.length === 1, "the request's effect was written");
  } finally {
    await api.stop("SIGKILL").catch(() => {});
    await db.close();
  }
});
