// A fresh database per test file: a new database on the server of DATABASE_URL (a real
// PostgreSQL, as CI runs it), or a new in-memory embedded PGlite when DATABASE_URL is unset.
import postgres from "postgres";
import { type Database, openDatabase } from "../../db/client.ts";
import { randomBase62 } from "../../common/ids.ts";

export const realPostgresUrl = Deno.env.get("DATABASE_URL") || undefined;

export async function freshDatabase(
  options: { embedded?: boolean; max?: number } = {},
): Promise<Database> {
  if (options.embedded || !realPostgresUrl) {
    return await openDatabase({ max: options.max ?? 4 });
  }
  const name = `test_${randomBase62(12).toLowerCase()}`;
  const admin = postgres(realPostgresUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(realPostgresUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), max: options.max ?? 10 });
  return {
    ...db,
    close: async () => {
      await db.close();
      const dropper = postgres(realPostgresUrl, { max: 1, onnotice: () => {} });
      await dropper.unsafe(`drop database if exists ${name} with (force)`);
      await dropper.end();
    },
  };
}

/**
 * Registers `fn` as a test on the embedded PGlite and, when DATABASE_URL is set, on the real
 * PostgreSQL too: the DB layer must behave the same on both.
 */
export function testOnEveryDatabase(name: string, fn: (db: Database) => Promise<void>): void {
  const targets: [string, boolean][] = [["pglite", true]];
  if (realPostgresUrl) targets.unshift(["postgres", false]);
  for (const [label, embedded] of targets) {
    Deno.test(`[${label}] ${name}`, async () => {
      const db = await freshDatabase({ embedded });
      try {
        await fn(db);
      } finally {
        await db.close();
      }
    });
  }
}
