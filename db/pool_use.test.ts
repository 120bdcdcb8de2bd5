// The pool's use as the metrics see it (db/client.ts poolUse): queries count from when they are
// sent until they settle, a transaction counts once, a fragment inside another query never.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { testOnEveryDatabase } from "../tests/helpers/database.ts";
import { poolUse } from "./client.ts";

testOnEveryDatabase("queries and transactions count as in flight until they settle", async (db) => {
  const use = poolUse(db.sql)!;
  assert(use, "openDatabase's pools are measured");
  assert(use.max > 0);
  const before = use.issued;
  assertEquals(use.inFlight, 0);

  const slow = db.sql`select pg_sleep(0.2)`;
  const made = db.sql`select 1`; // made, never awaited: not sent, not counted
  assertEquals(use.inFlight, 0, "a query is counted when it is sent (awaited), not made");
  const running = slow.then(() => "done");
  assertEquals(use.inFlight, 1);
  let insideTx = -1;
  const tx = db.sql.begin(async (t) => {
    insideTx = use.inFlight;
    await t`select 1`;
    await t`select 2`;
  });
  assertEquals(use.inFlight, 2, "a transaction counts once for all its statements");
  await Promise.all([running, tx]);
  assert(insideTx >= 1, "the transaction is in flight while its body runs");
  assertEquals(use.inFlight, 0);
  assertEquals(use.issued, before + 2);
  void made;

  // A fragment embedded in a query is not a query of its own.
  const where = db.sql`where n > ${0}`;
  const rows = await db.sql`select n from (values (1), (2)) as v(n) ${where}`;
  assertEquals(rows.length, 2);
  assertEquals(use.issued, before + 3);

  // A failing query settles too.
  await db.sql`select no_such_column`.catch(() => {});
  await db.sql.unsafe("select 1");
  assertEquals(use.inFlight, 0);
  assertEquals(use.issued, before + 5);

  // A failing transaction settles, and its error still reaches the caller.
  let failed = false;
  await db.sql.begin(async (t) => {
    await t`select no_such_column`;
  }).catch(() => (failed = true));
  assert(failed);
  assertEquals(use.inFlight, 0);
});

testOnEveryDatabase("the measured pool keeps the driver's helpers", async (db) => {
  const [row] = await db.sql<{ j: { a: number }; ok: boolean }[]>`
    select ${db.sql.json({ a: 1 })}::jsonb as j, ${db.sql("n")} is null as ok
    from (values (null::int)) as v(n)`;
  assertEquals(row.j, { a: 1 });
  assertEquals(row.ok, true);
  const inserted = await db.sql`select * from (values ${db.sql([[1, "a"], [2, "b"]])}) as v(n, s)`;
  assertEquals(inserted.length, 2);
});
