// The TCP side of the SIP transport (RFC 3261 section 18): connections from trunks, each a byte
// stream framed by Content-Length; responses go back on the connection the request came on.
import { SipStreamFramer } from "./stream.ts";
import type { Peer } from "./udp.ts";

export interface StreamSource {
  peer: Peer;
  reply(bytes: Uint8Array): void;
  close(): void;
}

export interface StreamListener {
  readonly port: number;
  close(): Promise<void>;
}

export interface StreamHandlers {
  message(bytes: Uint8Array, from: StreamSource): void;
  /** The stream broke (no Content-Length, too large): `bytes` may still earn a 400. */
  broken(reason: string, bytes: Uint8Array, from: StreamSource): void;
}

export function listenTcp(host: string, port: number, handlers: StreamHandlers): StreamListener {
  const listener = Deno.listen({ hostname: host, port, transport: "tcp" });
  const connections = new Set<Deno.TcpConn>();
  const serve = async (conn: Deno.TcpConn) => {
    connections.add(conn);
    const remote = conn.remoteAddr as Deno.NetAddr;
    let open = true;
    let writing = Promise.resolve();
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
        connections.delete(conn);
        writing.finally(() => {
          try {
            conn.close();
          } catch { /* already closed */ }
        });
      },
    };
    const framer = new SipStreamFramer();
    // The loop reads until the connection closes: leaving it early would cancel the readable side,
    // which closes the connection before a last response (the 400) is written.
    try {
      for await (const chunk of conn.readable) {
        for (const framed of framer.push(chunk)) {
          if (framed.kind === "message") handlers.message(framed.bytes, source);
          else if (framed.kind === "ping") source.reply(new Uint8Array([13, 10]));
          else {
            handlers.broken(framed.reason, framed.bytes, source);
            source.close();
          }
        }
      }
    } catch { /* reset by the peer */ }
    source.close();
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) void serve(conn);
    } catch { /* listener closed */ }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
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
