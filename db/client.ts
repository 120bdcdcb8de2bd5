// One way to reach the database for every process: npm:postgres against DATABASE_URL, or against
// an embedded PGlite served on a loopback socket when no DATABASE_URL is set.
import postgres from "postgres";
import { migrate } from "./migrate.ts";

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

const quiet = { onnotice: () => {} };

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
  const sql = postgres(url, { max, ...quiet });
  const reservations = postgres(url, {
    max,
    ...quiet,
    connection: { synchronous_commit: "off" },
  });
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
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  if (dataDir) await Deno.mkdir(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir);
  // The socket server must accept at least as many connections as any client pool it serves,
  // or the extra connections hang (stack-notes §3). Other processes get their own small pools.
  const server = new PGLiteSocketServer({
    db: pglite,
    host: "127.0.0.1",
    port: 0,
    maxConnections: max * 4,
  });
  await server.start();
  const address = (server as unknown as { server: { address(): { port: number } } }).server
    .address();
  const url = `postgres://postgres@127.0.0.1:${address.port}/postgres`;
  const sql = postgres(url, { max, ...quiet });
  return {
    sql,
    reservations: sql,
    url,
    embedded: true,
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
      await pglite.close();
    },
  };
}
