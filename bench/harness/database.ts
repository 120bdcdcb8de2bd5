// A PostgreSQL database of the bench's own, on the server of BENCH_DATABASE_URL (default the
// local trust-auth PostgreSQL; `create database` must be allowed there), dropped at the end, so
// a bench's figures are never of a database that other work fills.
import postgres from "postgres";
import { randomBase62 } from "../../common/ids.ts";

const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ??
  "postgres://postgres@127.0.0.1:5432/postgres";

export interface BenchDatabase {
  name: string;
  url: string;
  /** Database-level settings (`synchronous_commit`, `off`), for new connections. */
  set(name: string, value: string): Promise<void>;
  /** Drops it, ending whatever connections still use it. */
  drop(): Promise<void>;
}

/** Creates `<prefix>_<random>`. */
export async function createBenchDatabase(prefix = "bench"): Promise<BenchDatabase> {
  const name = `${prefix}_${randomBase62(10).toLowerCase()}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async set(setting, value) {
      if (!/^[a-z_]+$/.test(setting) || !/^[A-Za-z0-9_.]+$/.test(value)) {
        throw new Error(`bad database setting ${setting}=${value}`);
      }
      await admin.unsafe(`alter database ${name} set ${setting} = '${value}'`);
    },
    async drop() {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
