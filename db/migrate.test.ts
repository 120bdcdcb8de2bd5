// Migrations: applied once, idempotent on restart, and safe when two processes start together.
import { assertEquals } from "../tests/helpers/assert.ts";
import { testOnEveryDatabase } from "../tests/helpers/database.ts";
import { loadMigrations, migrate } from "./migrate.ts";

testOnEveryDatabase("migrations are idempotent and serialize concurrent starts", async (db) => {
  const all = await loadMigrations();
  const versions = all.map((m) => m.version);
  // openDatabase already migrated: running again applies nothing.
  assertEquals(await migrate(db.sql), []);
  const applied = await db.sql`select version from schema_migrations order by version`;
  assertEquals(applied.map((r) => r.version), versions);

  // A new migration raced by two "processes" (two reserved connections): applied exactly once.
  const extra = [...all, {
    version: 9999,
    name: "race",
    sql: "create table race_probe (id int); insert into race_probe values (1);",
  }];
  const results = await Promise.all([migrate(db.sql, extra), migrate(db.sql, extra)]);
  assertEquals(results.flat(), [9999]);
  const [probe] = await db.sql`select count(*)::int as n from race_probe`;
  assertEquals(probe.n, 1);
});

testOnEveryDatabase("a failing migration is rolled back whole", async (db) => {
  const broken = [{
    version: 9998,
    name: "broken",
    sql: "create table half (id int); select 1/0;",
  }];
  let message = "";
  try {
    await migrate(db.sql, broken);
  } catch (err) {
    message = (err as Error).message;
  }
  assertEquals(message.startsWith("migration 9998_broken failed"), true);
  const [t] = await db.sql`select to_regclass('half') is null as gone`;
  assertEquals(t.gone, true);
  const rows = await db.sql`select 1 from schema_migrations where version = 9998`;
  assertEquals(rows.length, 0);
});
