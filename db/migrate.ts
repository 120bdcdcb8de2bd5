// Versioned SQL migrations, applied in order at start-up under an advisory lock so that two
// processes starting at once neither apply a migration twice nor see a half-made schema.
import type postgres from "postgres";

const LOCK_ID = 7_302_451_119; // any constant shared by every process of this service

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads db/migrations/NNNN_name.sql in version order. */
export async function loadMigrations(
  dir = new URL("./migrations/", import.meta.url),
): Promise<Migration[]> {
  const found: Migration[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const match = /^(\d+)_(.+)\.sql$/.exec(entry.name);
    if (!entry.isFile || !match) continue;
    found.push({
      version: Number(match[1]),
      name: match[2],
      sql: await Deno.readTextFile(new URL(entry.name, dir)),
    });
  }
  return found.sort((a, b) => a.version - b.version);
}

/** Applies the migrations not yet applied; returns the versions it applied. */
export async function migrate(
  sql: postgres.Sql,
  migrations?: Migration[],
): Promise<number[]> {
  const list = migrations ?? await loadMigrations();
  const conn = await sql.reserve();
  const applied: number[] = [];
  try {
    await conn`select pg_advisory_lock(${LOCK_ID})`;
    await conn`create table if not exists schema_migrations (
      version integer primary key, name text not null, applied_at timestamptz not null default now())`;
    const done = new Set(
      (await conn<{ version: number }[]>`select version from schema_migrations`).map((r) =>
        r.version
      ),
    );
    for (const m of list) {
      if (done.has(m.version)) continue;
      await conn.unsafe("begin");
      try {
        await conn.unsafe(m.sql);
        await conn`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
        await conn.unsafe("commit");
      } catch (err) {
        await conn.unsafe("rollback");
        throw new Error(`migration ${m.version}_${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.version);
    }
  } finally {
    await conn`select pg_advisory_unlock(${LOCK_ID})`.catch(() => {});
    conn.release();
  }
  return applied;
}
