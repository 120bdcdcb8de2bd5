// The TCP side of the SIP transport (RFC 3261 section 18): connections from trunks, each a byte
// stream framed by Content-Length; responses go back on the connection the request came on.
// The worker's UAS and the control plane's redirect server both listen through this, so both
// get its bounds (StreamBounds), as Kamailio bounds its TCP (tcp_msg_read_timeout,
// tcp_connection_lifetime, tcp_max_connections, and a per-source cap as pike gives it): a
// message must arrive whole in time, an idle connection is closed, and connections are capped
// per source address and in all. Without them a slow-loris (a byte a second) was never dropped
// and 500 half-open connections were held at ~120 KB each.
import { addressKey, parseIp } from "../common/ipaddr.ts";
import { logger } from "../common/log.ts";
import { RefusalLog } from "../common/refusal_log.ts";
import { SipStreamFramer } from "./stream.ts";
import type { Peer } from "./udp.ts";

export interface StreamSource {
  peer: Peer;
  reply(bytes: Uint8Array): void;
  close(): void;
}

export interface StreamListener {
  readonly port: number;
  /** Connections open now (for tests and the bench). */
  readonly connections: number;
  close(): Promise<void>;
}

export interface StreamHandlers {
  message(bytes: Uint8Array, from: StreamSource): void;
  /** The stream broke (no Content-Length, too large): `bytes` may still earn a 400. */
  broken(reason: string, bytes: Uint8Array, from: StreamSource): void;
}

export interface StreamBounds {
  /** A message must be whole this long after its first byte (the first: after the connect). */
  messageTimeoutMs: number;
  /** A connection with nothing arriving for this long after a whole message is closed. */
  idleTimeoutMs: number;
  /** Connections open at once from one address (an IPv6 source by its /64). */
  perSource: number;
  /** Connections open at once in all. */
  total: number;
}

/**
 * 10 s for a message, as the API gives a JSON body (a trunk writes an INVITE in one go);
 * 120 s idle, Kamailio's default connection lifetime (a CRLFCRLF keep-alive, RFC 5626, counts
 * as traffic); 32 from one address, a busy SBC's handful of connections with room to spare;
 * 1,024 in all, ~20 MB at the ~20 KB a half-open connection now costs.
 */
export const DEFAULT_STREAM_BOUNDS: StreamBounds = {
  messageTimeoutMs: 10_000,
  idleTimeoutMs: 120_000,
  perSource: 32,
  total: 1024,
};

/** Read this much at a time: a half-open connection holds one such buffer and its partial head. */
const READ_BYTES = 4096;

/**
 * Reads a SIP connection until it ends, accepted or opened by us (tcp_client.ts): each framed
 * message to `handlers`, a keep-alive ping answered, a stream that cannot be framed to `broken`.
 * The clock runs from a message's first byte, not its last: a byte a second never keeps a
 * connection open. Between messages, the idle clock. Resolves with why it stopped reading (the
 * caller closes); a failed read throws.
 */
export async function readFramed(
  conn: Deno.Conn,
  source: StreamSource,
  handlers: StreamHandlers,
  bounds: StreamBounds,
  isOpen: () => boolean,
  dropAfter: (ms: number, reason: string) => void,
): Promise<string> {
  const framer = new SipStreamFramer();
  const buffer = new Uint8Array(READ_BYTES);
  while (isOpen()) {
    const n = await conn.read(buffer);
    if (n === null) return "closed by the peer";
    if (!isOpen()) break;
    let fresh = framer.buffered === 0;
    for (const framed of framer.push(buffer.subarray(0, n))) {
      fresh = true;
      if (framed.kind === "message") handlers.message(framed.bytes, source);
      else if (framed.kind === "ping") source.reply(new Uint8Array([13, 10]));
      else {
        handlers.broken(framed.reason, framed.bytes, source);
        return `unframeable: ${framed.reason}`;
      }
    }
    if (!isOpen()) break;
    if (framer.buffered === 0) dropAfter(bounds.idleTimeoutMs, "idle");
    else if (fresh) dropAfter(bounds.messageTimeoutMs, "no whole message in time");
  }
  return "closed here";
}

const refusals = new RefusalLog(logger("sip-tcp"));

export function listenTcp(
  host: string,
  port: number,
  handlers: StreamHandlers,
  bounds: StreamBounds = DEFAULT_STREAM_BOUNDS,
): StreamListener {
  const listener = Deno.listen({ hostname: host, port, transport: "tcp" });
  const connections = new Set<Deno.TcpConn>();
  const perSource = new Map<string, number>();
  const serve = async (conn: Deno.TcpConn) => {
    const remote = conn.remoteAddr as Deno.NetAddr;
    const ip = parseIp(remote.hostname);
    const sourceKey = ip ? addressKey(ip) : remote.hostname;
    const fromSource = perSource.get(sourceKey) ?? 0;
    const full = connections.size >= bounds.total
      ? "too many SIP connections in all"
      : fromSource >= bounds.perSource
      ? "too many SIP connections from this address"
      : undefined;
    if (full) {
      refusals.refused("SIP TCP connection refused", remote.hostname, full, {
        port: remote.port,
      });
      try {
        conn.close();
      } catch { /* already closed */ }
      return;
    }
    connections.add(conn);
    perSource.set(sourceKey, fromSource + 1);
    let open = true;
    let writing = Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const source: StreamSource = {
      peer: { address: remote.hostname, port: remote.port },
      // Writes are chained so two responses never interleave on the stream.
      reply: (bytes) => {
        if (!open) return;
        writing = writing.then(async () => {
          let sent = 0;
          while (sent < bytes.length) sent += await conn.write(bytes.subarray(sent));
        }).catch(() => source.close());
      },
      close: () => {
        if (!open) return;
        open = false;
        clearTimeout(timer);
        connections.delete(conn);
        const left = (perSource.get(sourceKey) ?? 1) - 1;
        if (left > 0) perSource.set(sourceKey, left);
        else perSource.delete(sourceKey);
        // After the last response is written: a 400 for a broken stream still reaches the peer.
        writing.finally(() => {
          try {
            conn.close();
          } catch { /* already closed */ }
        });
      },
    };
    const dropAfter = (ms: number, reason: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        refusals.refused("SIP TCP connection dropped", remote.hostname, reason, {
          port: remote.port,
        });
        source.close();
        // Closing a connection that a read is waiting on ends that read, and the loop below.
      }, ms);
    };
    dropAfter(bounds.messageTimeoutMs, "no whole message in time");
    try {
      await readFramed(conn, source, handlers, bounds, () => open, dropAfter);
    } catch { /* reset by the peer, or closed by a deadline */ }
    source.close();
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) void serve(conn);
    } catch { /* listener closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    get connections() {
      return connections.size;
    },
    close: async () => {
      listener.close();
      for (const conn of [...connections]) {
        try {
          conn.close();
        } catch { /* already closed */ }
      }
      await accepting;
    },
  };
}
