// Retrying database writes: the errors of a database that cannot be reached are told apart from
// the errors of a statement it refuses (with the real client, on both databases); the backoff
// grows to its ceiling; a failing writer warns once per window, not once per attempt.
import postgres from "postgres";
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { testOnEveryDatabase } from "../../tests/helpers/database.ts";
import { freePort } from "../../tests/helpers/process.ts";
import { switchableProxy } from "../../tests/helpers/switchable_proxy.ts";
import type { Logger } from "../../common/log.ts";
import { Backoff, isTransientDatabaseError, WarningLimiter } from "./retry.ts";

const caught = (p: Promise<unknown>) => p.then(() => undefined, (err) => err);

testOnEveryDatabase("unreachable is retried; a refused statement is not", async (db) => {
  const refused = postgres(`postgres://voice:voice@127.0.0.1:${freePort()}/none`, {
    max: 1,
    onnotice: () => {},
  });
  const proxy = switchableProxy(Number(new URL(db.url).port));
  const cut = postgres(proxy.url(db.url), { max: 1, onnotice: () => {} });
  try {
    assert(isTransientDatabaseError(await caught(refused`select 1`)), "connection refused");
    await cut`select 1`;
    const inFlight = caught(cut`select pg_sleep(0.5)`);
    await new Promise((r) => setTimeout(r, 100));
    proxy.cut();
    const lost = await inFlight;
    assert(isTransientDatabaseError(lost), `connection lost: ${lost}`);
    assert(isTransientDatabaseError(await caught(cut`select 1`)), "refused after the cut");

    for (
      const bad of [
        db.sql`select 1/0`,
        db.sql`select ${db.sql.json({ text: "nul \u0000" } as never)}::jsonb`,
        db.sql`insert into session_events (session_id, source, kind) values ('nope', 'w', 'k')`,
      ]
    ) {
      const err = await caught(bad);
      assert(err, "the statement fails");
      assert(!isTransientDatabaseError(err), `not retried: ${(err as Error).message}`);
    }
  } finally {
    proxy.close();
    await refused.end({ timeout: 1 });
    await cut.end({ timeout: 1 });
  }
});

Deno.test("server errors of the connection, resource and shutdown classes are retried", () => {
  for (const code of ["08006", "53300", "57P01", "57P03", "40001", "40P01"]) {
    assert(isTransientDatabaseError({ name: "PostgresError", code }), code);
  }
  for (const code of ["22P05", "23503", "42601", "XX000"]) {
    assert(!isTransientDatabaseError({ name: "PostgresError", code }), code);
  }
  assert(!isTransientDatabaseError(new TypeError("Do not know how to serialize a BigInt")));
  assert(isTransientDatabaseError(new Deno.errors.ConnectionRefused("refused")));
});

Deno.test("the backoff doubles from its first wait up to its ceiling, and starts over", () => {
  const b = new Backoff({ firstMs: 250, maxMs: 8000, jitter: 0 });
  assertEquals(
    Array.from({ length: 8 }, () => b.next()),
    [250, 500, 1000, 2000, 4000, 8000, 8000, 8000],
  );
  b.reset();
  assertEquals(b.next(), 250);
  const jittered = new Backoff({ firstMs: 1000, maxMs: 1000, jitter: 0.2 }, () => 1);
  assertEquals(jittered.next(), 1200);
});

Deno.test("a failing writer warns once per window and once when it works again", () => {
  const lines: string[] = [];
  const log: Logger = {
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
  let now = 0;
  const w = new WarningLimiter(log, 30_000, () => now);
  for (; now < 65_000; now += 250) w.failed("write", "could not write");
  w.succeeded("write", "written again");
  w.succeeded("write", "written again");
  assertEquals(lines, [
    "warn could not write",
    "warn could not write (still failing)",
    "warn could not write (still failing)",
    "info written again",
  ]);
});
