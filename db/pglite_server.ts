// The embedded database's wire: one PGlite (a single PostgreSQL session, in WASM) served on a
// loopback TCP port, so every process of `deno task run` (the API and its worker) reaches it
// through npm:postgres as it would a real server.
//
// Ours, not npm:@electric-sql/pglite-socket. Its latest (0.2.17) queues each protocol message on
// its own and pins the session to a connection only inside a transaction, so two connections'
// extended-protocol batches (Parse, Bind, Execute, Sync) interleave in the one session: a portal
// is lost (`portal "" does not exist`), a reply reaches a client that asked nothing, and a query
// may never settle; one throw inside its queue stops the queue for good (electric-sql/pglite#1046,
// open). A `deno task run` once hung on Ctrl-C that way, its API's loops waiting on a query. Here
// a connection holds the session from its first message until PGlite answers ReadyForQuery idle:
// a whole batch, or a whole transaction, goes in as one.
import { logger } from "../common/log.ts";
import { concat, writeAll } from "../common/bytes.ts";

const log = logger("pglite");

/** What the server needs of PGlite (`PGlite` has both). */
export interface WireSession {
  execProtocolRaw(message: Uint8Array): Promise<Uint8Array>;
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
}

export interface WireServerOptions {
  /** Connections at once, over every process; one more is refused with a protocol error. */
  maxConnections?: number;
  /**
   * How long a connection may hold the session without sending anything (inside a transaction
   * or a batch): past it the connection is closed and its transaction rolled back, as
   * PostgreSQL's idle_in_transaction_session_timeout would. A stopped client cannot stall all.
   */
  holdLimitMs?: number;
  /** The largest protocol message taken; PostgreSQL's own limit is 1 GB. */
  maxMessageBytes?: number;
}

export interface WireServer {
  port: number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

/** A message a client sends: its bytes, and its type (`startup` before the first typed one). */
export interface Frame {
  type: string;
  bytes: Uint8Array;
}

/** Splits one connection's bytes into whole protocol messages. */
export class FrameReader {
  #buf = new Uint8Array(0);
  #started = false;

  constructor(private readonly maxBytes: number) {}

  /** The whole messages `chunk` completes; throws on one longer than maxBytes. */
  push(chunk: Uint8Array): Frame[] {
    const joined = concat(this.#buf, chunk);
    const frames: Frame[] = [];
    let at = 0;
    for (;;) {
      const head = this.#started ? 1 : 0;
      if (joined.length - at < head + 4) break;
      const view = new DataView(joined.buffer, joined.byteOffset + at + head);
      const length = view.getInt32(0);
      if (length < 4 || length > this.maxBytes) {
        throw new Error(`a protocol message of ${length} bytes`);
      }
      const end = at + head + length;
      if (joined.length < end) break;
      const bytes = joined.slice(at, end);
      if (this.#started) frames.push({ type: String.fromCharCode(bytes[0]), bytes });
      else {
        const code = length >= 8 ? new DataView(bytes.buffer).getInt32(4) : 0;
        const type = code === SSL_REQUEST || code === GSSENC_REQUEST
          ? "encryption"
          : code === CANCEL_REQUEST
          ? "cancel"
          : "startup";
        // After a refused encryption request the client sends its startup message next.
        if (type === "startup") this.#started = true;
        frames.push({ type, bytes });
      }
      at = end;
    }
    this.#buf = joined.slice(at);
    return frames;
  }
}

/** The transaction status of a reply that ends in ReadyForQuery: I (idle), T or E; else none. */
export function readyStatus(reply: Uint8Array): string | undefined {
  const n = reply.length;
  if (n < 6 || reply[n - 6] !== 0x5a) return undefined;
  if (reply[n - 5] !== 0 || reply[n - 4] !== 0 || reply[n - 3] !== 0 || reply[n - 2] !== 5) {
    return undefined;
  }
  return String.fromCharCode(reply[n - 1]);
}

/** A simple Query message. */
function query(sql: string): Uint8Array {
  const text = new TextEncoder().encode(sql + "\0");
  const out = new Uint8Array(5 + text.length);
  out[0] = 0x51;
  new DataView(out.buffer).setInt32(1, 4 + text.length);
  out.set(text, 5);
  return out;
}

/** A FATAL ErrorResponse with its SQLSTATE, for a connection refused before startup. */
function fatal(code: string, message: string): Uint8Array {
  const fields = new TextEncoder().encode(
    `SFATAL\0VFATAL\0C${code}\0M${message}\0\0`,
  );
  const out = new Uint8Array(5 + fields.length);
  out[0] = 0x45;
  new DataView(out.buffer).setInt32(1, 4 + fields.length);
  out.set(fields, 5);
  return out;
}

/** One holder at a time, first come first served. */
class SessionTurn {
  #held = false;
  #waiting: (() => void)[] = [];

  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((ok) => this.#waiting.push(ok));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

/** Serves `session` on 127.0.0.1 (`port` 0: one the system picks). */
export function serveWire(
  session: WireSession,
  port = 0,
  options: WireServerOptions = {},
): WireServer {
  const maxConnections = options.maxConnections ?? 64;
  const holdLimitMs = options.holdLimitMs ?? 60_000;
  const maxMessageBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  const turn = new SessionTurn();
  const open = new Set<Deno.TcpConn>();
  const serving = new Set<Promise<void>>();
  const exec = (m: Uint8Array) => session.runExclusive(() => session.execProtocolRaw(m));

  /** A holder that leaves gives the session back clean: its batch ended, its transaction undone. */
  const giveBack = async () => {
    try {
      if (readyStatus(await exec(SYNC)) !== "I") await exec(query("ROLLBACK"));
    } finally {
      turn.release();
    }
  };

  const serve = async (conn: Deno.TcpConn) => {
    // Replies go message by message: Nagle would hold each small one for the client's delayed ACK.
    conn.setNoDelay(true);
    const reader = new FrameReader(maxMessageBytes);
    let holding = false;
    let idle: ReturnType<typeof setTimeout> | undefined;
    const buf = new Uint8Array(64 * 1024);
    // A chunk's replies go out in one write: its batch's, or up to where it gave the session back.
    let replies: Uint8Array[] = [];
    const flush = async () => {
      if (replies.length === 0) return;
      const out = replies.length === 1 ? replies[0] : concat(...replies);
      replies = [];
      await writeAll(conn, out);
    };
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) return;
        clearTimeout(idle);
        for (const frame of reader.push(buf.subarray(0, n))) {
          if (frame.type === "encryption") {
            await writeAll(conn, new TextEncoder().encode("N"));
            continue;
          }
          if (frame.type === "cancel") return; // not supported: the query runs to its end
          if (frame.type === "X") return; // Terminate
          if (!holding) {
            await turn.acquire();
            holding = true;
          }
          const reply = await exec(frame.bytes);
          if (reply.length > 0) replies.push(reply);
          if (readyStatus(reply) === "I") {
            holding = false;
            turn.release();
            await flush();
          }
        }
        await flush();
        if (holding) {
          idle = setTimeout(() => {
            log.warn("closed a connection that held the embedded database idle", {
              held_ms: holdLimitMs,
            });
            conn.close();
          }, holdLimitMs);
        }
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.BadResource || err instanceof Deno.errors.ConnectionReset)) {
        log.warn("embedded database connection failed", { cause: (err as Error).message });
      }
    } finally {
      clearTimeout(idle);
      open.delete(conn);
      try {
        conn.close();
      } catch { /* closed already */ }
      if (holding) await giveBack().catch(() => {});
    }
  };

  const accepting = (async () => {
    for await (const conn of listener) {
      if (open.size >= maxConnections) {
        log.warn("refused a connection to the embedded database: too many", {
          max_connections: maxConnections,
        });
        void writeAll(conn, fatal("53300", "too many connections to the embedded database"))
          .catch(() => {}).finally(() => conn.close());
        continue;
      }
      open.add(conn);
      const p = serve(conn).finally(() => serving.delete(p));
      serving.add(p);
    }
  })().catch(() => {/* the listener closed */});

  return {
    port: (listener.addr as Deno.NetAddr).port,
    close: async () => {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed already */ }
      }
      await accepting;
      await Promise.all([...serving]);
    },
  };
}
