// A loopback TCP proxy that can be cut and put back on the same port, to take the database away
// from a running process for a while. Cut: every open connection is closed and the port refuses
// new ones (as a stopped database server does); restored: the port accepts and forwards again.
export interface SwitchableProxy {
  port: number;
  /** The URL of `databaseUrl`'s database, through the proxy. */
  url(databaseUrl: string): string;
  cut(): void;
  restore(): void;
  close(): void;
}

export function switchableProxy(targetPort: number): SwitchableProxy {
  const open = new Set<Deno.Conn>();
  let listener: Deno.Listener | undefined;
  const first = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (first.addr as Deno.NetAddr).port;

  const serve = (l: Deno.Listener) => {
    listener = l;
    (async () => {
      for await (const client of l) {
        try {
          const server = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
          open.add(client).add(server);
          const pipe = (a: Deno.Conn, b: Deno.Conn) =>
            a.readable.pipeTo(b.writable).catch(() => {}).finally(() => {
              for (const c of [a, b]) {
                try {
                  c.close();
                } catch { /* already closed */ }
                open.delete(c);
              }
            });
          pipe(client, server);
          pipe(server, client);
        } catch {
          client.close();
        }
      }
    })().catch(() => {});
  };
  const cut = () => {
    try {
      listener?.close();
    } catch { /* already closed */ }
    listener = undefined;
    for (const c of open) {
      try {
        c.close();
      } catch { /* already closed */ }
    }
    open.clear();
  };
  serve(first);
  return {
    port,
    url(databaseUrl) {
      const u = new URL(databaseUrl);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut,
    restore() {
      if (!listener) serve(Deno.listen({ hostname: "127.0.0.1", port }));
    },
    close: cut,
  };
}
