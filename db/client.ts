// One way to reach the database for every process: npm:postgres against DATABASE_URL, or against
// an embedded PGlite served on a loopback socket when no DATABASE_URL is set.
import postgres from "postgres";
import { migrate } from "./migrate.ts";
import { serveWire } from "./pglite_server.ts";

/** A pool or a transaction: the table modules run on either. */
export type Sql = postgres.ISql;
export type Pool = postgres.Sql;

export interface Database {
  sql: Pool;
  /**
   * A pool whose commits do not wait for the WAL flush (synchronous_commit off), for the
   * connect-time reservation only: every connect updates its node's counter row, and holding
   * that row's lock through a disk flush serializes all connects on one flush each. A crash can
   * lose the last few hundred milliseconds of such commits (sessions whose offer the worker then
   * refuses with 404, and that were never billed); nothing is ever half-written. The embedded
   * database has one pool for everything.
   */
  reservations: Pool;
  /** The URL other processes can use to reach the same database (the embedded one included). */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** A postgres:// URL; unset means the embedded PGlite. */
  url?: string;
  /** Folder of the embedded database; unset means in memory. */
  dataDir?: string;
  /** Connection pool size. */
  max?: number;
  /** Apply migrations before returning (default true). */
  migrate?: boolean;
}

// postgres.js waits before reconnecting after failed connects, growing to 10–20 s by default
// (0.5–1 × min(3^n / 100, 20) s): after an outage the first query could wait that long after the
// database is back. Capped at 2 s, so writes kept for the database's return (the worker's session
// log and call ends, media/call/record_writer.ts) go in within about 2 s of it.
const reconnectBackoff = (retries: number) => Math.min(0.1 * 2 ** retries, 2);

const quiet = { onnotice: () => {}, backoff: reconnectBackoff };

/** What a pool of this process is doing, as far as its callers can see (the metrics read it). */
export interface PoolUse {
  /**
   * Queries and transactions issued through the pool and not yet settled: waiting for a
   * connection or running. A transaction counts once for all its statements (it holds one
   * connection). postgres.js exposes no connection counts, so this is what callers measure.
   */
  inFlight: number;
  /** Queries and transactions issued through the pool since it opened. */
  issued: number;
  /** Connections the pool may open. */
  max: number;
}

const uses = new WeakMap<Pool, PoolUse>();

/** What `pool` is doing; undefined for a pool not opened by openDatabase. */
export function poolUse(pool: Pool): Readonly<PoolUse> | undefined {
  return uses.get(pool);
}

/**
 * The pool behind a counting front: a query is counted from its first `then` (when postgres.js
 * sends it; a fragment embedded in another query is never awaited, so never counted) until it
 * settles; `begin` from its call until the transaction settles. Everything else passes through.
 */
function measured(sql: Pool, max: number): Pool {
  const use: PoolUse = { inFlight: 0, issued: 0, max };
  const settled = () => void use.inFlight--;
  const start = () => {
    use.inFlight++;
    use.issued++;
  };
  const track = <T>(query: T): T => {
    if (!(query instanceof Promise)) return query; // identifiers and builders are not queries
    const then = query.then;
    let counted = false;
    Object.defineProperty(query, "then", {
      configurable: true,
      writable: true,
      value(this: Promise<unknown>, ok?: unknown, fail?: unknown) {
        if (!counted) {
          counted = true;
          start();
          then.call(this, settled, settled);
        }
        return then.call(this, ok as never, fail as never);
      },
    });
    return query;
  };
  const wrapped = {
    unsafe: (...args: Parameters<Pool["unsafe"]>) => track(sql.unsafe(...args)),
    file: (...args: Parameters<Pool["file"]>) => track(sql.file(...args)),
    begin: (...args: unknown[]) => {
      start();
      const tx = (sql.begin as (...a: unknown[]) => Promise<unknown>)(...args);
      tx.then(settled, settled);
      return tx;
    },
  } as Record<string | symbol, unknown>;
  const front = new Proxy(sql, {
    apply: (target, self, args) => track(Reflect.apply(target, self, args)),
    get: (target, key) => Object.hasOwn(wrapped, key) ? wrapped[key] : Reflect.get(target, key),
  });
  uses.set(front, use);
  return front;
}

/** Opens the database and brings its schema up to date. */
export async function openDatabase(options: OpenOptions = {}): Promise<Database> {
  const db = options.url
    ? external(options.url, options.max ?? 10)
    : await embedded(options.dataDir, options.max ?? 4);
  try {
    if (options.migrate !== false) await migrate(db.sql);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

function external(url: string, max: number): Database {
  const sql = measured(postgres(url, { max, ...quiet }), max);
  const reservations = measured(
    postgres(url, { max, ...quiet, connection: { synchronous_commit: "off" } }),
    max,
  );
  return {
    sql,
    reservations,
    url,
    embedded: false,
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), reservations.end({ timeout: 5 })]);
    },
  };
}

async function embedded(dataDir: string | undefined, max: number): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  if (dataDir) await Deno.mkdir(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir);
  // One session for every connection of every process: db/pglite_server.ts says why it is ours.
  const server = serveWire(pglite);
  const url = `postgres://postgres@127.0.0.1:${server.port}/postgres`;
  const sql = measured(postgres(url, { max, ...quiet }), max);
  return {
    sql,
    reservations: sql,
    url,
    embedded: true,
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.close();
      await pglite.close();
    },
  };
}
