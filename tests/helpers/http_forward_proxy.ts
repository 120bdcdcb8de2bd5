// A plain HTTP forward proxy on one address: a browser in a network namespace (netns.ts) reaches
// the test's servers on the host's 127.0.0.1 through it, so pages keep their usual origins
// (http://127.0.0.1:port) and key allowlists need no change. Only HTTP; media does not pass here.
export interface ForwardProxy {
  /** host:port, for --proxy-server. */
  address: string;
  close(): Promise<void>;
}

const HOP_BY_HOP = ["proxy-connection", "connection", "keep-alive", "proxy-authorization"];

export function httpForwardProxy(hostname: string): ForwardProxy {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname, port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      // The browser names its target in the Host header (and in the absolute request line).
      const url = new URL(req.url);
      const target = `http://${req.headers.get("host")}${url.pathname}${url.search}`;
      const headers = new Headers(req.headers);
      for (const h of HOP_BY_HOP) headers.delete(h);
      try {
        const res = await fetch(target, {
          method: req.method,
          headers,
          body: req.body,
          redirect: "manual",
        });
        return new Response(res.body, { status: res.status, headers: res.headers });
      } catch (e) {
        return new Response(`proxy: ${(e as Error).message}`, { status: 502 });
      }
    },
  );
  return {
    address: `${hostname}:${server.addr.port}`,
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}
