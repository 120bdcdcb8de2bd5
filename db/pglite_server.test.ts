// The embedded database's wire server on a real PGlite, driven by npm:postgres (as every process
// of `deno task run` drives it) and by a raw protocol client for the clients that misbehave.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { FrameReader, readyStatus, serveWire, type WireServerOptions } from "./pglite_server.ts";

async function withServer(
  options: WireServerOptions,
  fn: (port: number, pool: (max?: number) => postgres.Sql) => Promise<void>,
): Promise<void> {
  const db = await PGlite.create();
  const server = serveWire(db, 0, options);
  const pools: postgres.Sql[] = [];
  const pool = (max = 4) => {
    const sql = postgres({
      host: "127.0.0.1",
      port: server.port,
      user: "postgres",
      database: "postgres",
      max,
      onnotice: () => {},
    });
    pools.push(sql);
    return sql;
  };
  try {
    await fn(server.port, pool);
  } finally {
    for (const sql of pools) await sql.end({ timeout: 1 });
    await server.close();
    await db.close();
  }
}

/** A protocol client that does only what it is told: startup, simple queries, raw bytes. */
class RawClient {
  private reader = new FrameReader(1 << 20);
  private constructor(readonly conn: Deno.TcpConn) {
    // The server's messages are all typed: a startup-shaped one puts the reader past startup.
    this.reader.push(new Uint8Array([0, 0, 0, 8, 0, 3, 0, 0]));
  }

  static async open(port: number): Promise<RawClient> {
    const c = new RawClient(await Deno.connect({ hostname: "127.0.0.1", port }));
    const body = new TextEncoder().encode("user\0postgres\0database\0postgres\0\0");
    const startup = new Uint8Array(8 + body.length);
    new DataView(startup.buffer).setInt32(0, startup.length);
    new DataView(startup.buffer).setInt32(4, 196608);
    startup.set(body, 8);
    await c.conn.write(startup);
    assertEquals(await c.untilReady(), "I");
    return c;
  }

  async send(type: string, body: string): Promise<void> {
    const text = new TextEncoder().encode(body);
    const m = new Uint8Array(5 + text.length);
    m[0] = type.charCodeAt(0);
    new DataView(m.buffer).setInt32(1, 4 + text.length);
    m.set(text, 5);
    await this.conn.write(m);
  }

  /** Reads the server's messages until ReadyForQuery; its status, or null if the server closed. */
  async untilReady(): Promise<string | null> {
    const buf = new Uint8Array(65536);
    for (;;) {
      const n = await this.conn.read(buf).catch(() => null);
      if (n === null) return null;
      for (const f of this.reader.push(buf.subarray(0, n))) {
        if (f.type === "Z") return String.fromCharCode(f.bytes[5]);
      }
    }
  }
}

Deno.test("four connections' batches, transactions and errors each get their own answers", async () => {
  await withServer({}, async (_port, pool) => {
    const sql = pool(4);
    await sql`create table t (id int primary key, v text)`;
    let wrong = 0;
    await Promise.all(Array.from({ length: 800 }, async (_, i) => {
      switch (i % 4) {
        case 0:
          if ((await sql`select ${i}::int as a`)[0].a !== i) wrong++;
          break;
        case 1: {
          const [r] = await sql`select ${"s" + i}::text as b, ${i}::int + 1 as c`;
          if (r.b !== "s" + i || r.c !== i + 1) wrong++;
          break;
        }
        case 2:
          await sql.begin(async (tx) => {
            await tx`insert into t ${tx({ id: i, v: "x" + i })}`;
            if ((await tx`select v from t where id = ${i}`)[0]?.v !== "x" + i) wrong++;
          });
          break;
        case 3: {
          const err = await sql`select 1 / ${0}::int as z`.then(() => undefined, (e) => e);
          if (!/division by zero/.test(String(err))) wrong++;
        }
      }
    }));
    // pglite-socket 0.2.17 answers this with `portal "" does not exist` and stray replies.
    assertEquals(wrong, 0);
    assertEquals((await sql`select count(*)::int as n from t`)[0].n, 200);
  });
});

Deno.test("a client that leaves inside its transaction leaves nothing written and blocks no one", async () => {
  await withServer({}, async (port, pool) => {
    const sql = pool(2);
    await sql`create table t (id int)`;
    const raw = await RawClient.open(port);
    await raw.send("Q", "begin; insert into t values (1)\0");
    assertEquals(await raw.untilReady(), "T");
    raw.conn.close();
    assertEquals((await sql`select count(*)::int as n from t`)[0].n, 0);
  });
});

Deno.test("a client that leaves mid-batch after an error does not leave the next one discarded", async () => {
  await withServer({}, async (port, pool) => {
    const sql = pool(1);
    await sql`select 1`; // its connection is open before, so no startup of its own resets things
    const raw = await RawClient.open(port);
    // Parse of a bad statement and no Sync: PostgreSQL now discards messages until a Sync.
    await raw.send("P", "\0select from nowhere_at_all\0\0\0");
    await new Promise((r) => setTimeout(r, 50));
    raw.conn.close();
    assertEquals((await sql`select 41 + 1 as n`)[0].n, 42);
  });
});

Deno.test("a connection that holds the session idle past the limit is closed and rolled back", async () => {
  await withServer({ holdLimitMs: 300 }, async (port, pool) => {
    const sql = pool(2);
    await sql`create table t (id int)`;
    const raw = await RawClient.open(port);
    await raw.send("Q", "begin; insert into t values (1)\0");
    assertEquals(await raw.untilReady(), "T");
    const t0 = performance.now();
    assertEquals((await sql`select count(*)::int as n from t`)[0].n, 0);
    assert(performance.now() - t0 >= 250, "the pool's query ran inside another's transaction");
    assertEquals(await raw.untilReady(), null, "the idle holder was not closed");
  });
});

Deno.test("a connection past the cap is refused with SQLSTATE 53300, not left hanging", async () => {
  await withServer({ maxConnections: 1 }, async (port, pool) => {
    const raw = await RawClient.open(port);
    const err = await pool(1)`select 1`.then(() => undefined, (e) => e);
    assertEquals((err as { code?: string })?.code, "53300", String(err));
    raw.conn.close();
  });
});

Deno.test("frames: split anywhere, an encryption request first, a message over the bound", () => {
  const r = new FrameReader(64);
  const ssl = [0, 0, 0, 8, 4, 210, 22, 47];
  const startup = [0, 0, 0, 9, 0, 3, 0, 0, 0];
  const query = [0x51, 0, 0, 0, 5, 0];
  const all = new Uint8Array([...ssl, ...startup, ...query]);
  const types: string[] = [];
  for (const b of all) types.push(...r.push(new Uint8Array([b])).map((f) => f.type));
  assertEquals(types, ["encryption", "startup", "Q"]);
  let thrown = false;
  try {
    r.push(new Uint8Array([0x51, 0, 0, 1, 0]));
  } catch {
    thrown = true;
  }
  assert(thrown, "a 256-byte message passed a 64-byte bound");
  assertEquals(readyStatus(new Uint8Array([0x5a, 0, 0, 0, 5, 0x54])), "T");
  assertEquals(readyStatus(new Uint8Array([0x43, 0, 0, 0, 5, 0x54])), undefined);
});
