// TCP connections the worker opens itself (RFC 3261 section 18.1.1): toward a trunk it places calls
// through. One connection per far-end address, opened on the first send and shared by every call
// to it while it is open; a send after it closed opens a new one. What arrives on it is framed as
// the listener frames (stream.ts) under the same bounds (tcp.ts StreamBounds: a message whole in
// time, an idle connection closed) and handed to the same handlers, with a StreamSource whose
// reply writes back on this connection, so responses and the far end's in-dialog requests reach
// the UAS as those on an accepted connection do.
import { logger } from "../common/log.ts";
import {
  DEFAULT_STREAM_BOUNDS,
  readFramed,
  type StreamBounds,
  type StreamHandlers,
  type StreamSource,
} from "./tcp.ts";
import type { Peer } from "./udp.ts";

const log = logger("sip-tcp");

/** One connection the worker opened: a StreamSource that also says when and why it closed. */
export interface ClientConnection extends StreamSource {
  /** Resolves once with why it closed: the connect failed, the peer closed it, a bound, ours. */
  readonly closed: Promise<string>;
  readonly open: boolean;
}

const keyOf = (p: Peer) => `${p.address}|${p.port}`;

export class TcpClient {
  private readonly connections = new Map<string, ClientConnection>();

  constructor(
    private readonly handlers: StreamHandlers,
    private readonly bounds: StreamBounds = DEFAULT_STREAM_BOUNDS,
  ) {}

  /** The open connection to `to`, or a new one (connecting; writes wait for it). */
  connection(to: Peer): ClientConnection {
    const key = keyOf(to);
    const existing = this.connections.get(key);
    if (existing?.open) return existing;
    const made = connect(to, this.handlers, this.bounds);
    this.connections.set(key, made);
    void made.closed.then(() => {
      if (this.connections.get(key) === made) this.connections.delete(key);
    });
    return made;
  }

  /** Writes `bytes` on the connection to `to`, opening one if none is open. */
  send(bytes: Uint8Array, to: Peer): void {
    this.connection(to).reply(bytes);
  }

  /** Connections open or opening now (for tests). */
  get size(): number {
    return this.connections.size;
  }

  async close(): Promise<void> {
    const all = [...this.connections.values()];
    for (const c of all) c.close();
    await Promise.all(all.map((c) => c.closed));
  }
}

function connect(to: Peer, handlers: StreamHandlers, bounds: StreamBounds): ClientConnection {
  let conn: Deno.TcpConn | undefined;
  let open = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The idle clock runs (no message half-read): our own writes restart it too. */
  let idle = false;
  let settle!: (reason: string) => void;
  const closed = new Promise<string>((r) => settle = r);
  // A connect that hangs (a firewall dropping SYNs) is given up after the message bound.
  const connecting = new Promise<Deno.TcpConn>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("connect timed out")), bounds.messageTimeoutMs);
    Deno.connect({ hostname: to.address, port: to.port, transport: "tcp" }).then((c) => {
      clearTimeout(t);
      // Given up (timed out or closed here) before it opened: nothing will use it.
      if (!open) return void c.close();
      conn = c;
      resolve(c);
    }, (err) => {
      clearTimeout(t);
      reject(err);
    });
  });
  // Writes wait for the connect and are chained so two messages never interleave on the stream.
  let writing: Promise<unknown> = connecting;
  const end = (reason: string) => {
    if (!open) return;
    open = false;
    clearTimeout(timer);
    log.info("SIP TCP connection closed", { address: to.address, port: to.port, reason });
    settle(reason);
    writing.finally(() => {
      try {
        conn?.close();
      } catch { /* already closed */ }
    }).catch(() => {});
  };
  const source: ClientConnection = {
    peer: to,
    closed,
    get open() {
      return open;
    },
    reply: (bytes) => {
      if (!open) return;
      // A connection we are still sending on (a CANCEL after a long ring) is not idle.
      if (idle) dropAfter(bounds.idleTimeoutMs, "idle");
      writing = writing.then(async () => {
        let sent = 0;
        while (sent < bytes.length) sent += await conn!.write(bytes.subarray(sent));
      }).catch((err) => end(`write failed: ${errorText(err)}`));
    },
    close: () => end("closed here"),
  };
  const dropAfter = (ms: number, reason: string) => {
    clearTimeout(timer);
    idle = reason === "idle";
    timer = setTimeout(() => end(reason), ms);
  };
  connecting.then(async (c) => {
    // Nothing is owed us until we send: the idle clock, then a message's from its first byte.
    dropAfter(bounds.idleTimeoutMs, "idle");
    try {
      // Closed here already (end ran) when it stops for that reason: end() is then a no-op.
      end(await readFramed(c, source, handlers, bounds, () => open, dropAfter));
    } catch (err) {
      end(`read failed: ${errorText(err)}`);
    }
  }, (err) => {
    log.warn("SIP TCP connect failed", {
      address: to.address,
      port: to.port,
      error: errorText(err),
    });
    end(`connect failed: ${errorText(err)}`);
  });
  return source;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
