// A static file server on a loopback port, so a page has an origin of its own (different from
// the API's and the worker's, which makes their CORS handling real). Optionally it also serves a
// few generated files and passes one path prefix through to another server, so a page can have
// its API on its own origin, as `deno task run` serves the demo page.
import { extname, join, normalize } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".map": "application/json",
  ".css": "text/css; charset=utf-8",
};

export interface StaticServer {
  /** e.g. "http://127.0.0.1:40123" */
  origin: string;
  close(): Promise<void>;
}

export interface StaticOptions {
  /** URL path → file text, served before files under root (e.g. "/call/demo-config.js"). */
  files?: Record<string, string>;
  /** Requests whose path starts with `prefix` are forwarded as they are to the origin `to`. */
  proxy?: { prefix: string; to: string };
}

/** Forwards a request unchanged but for its Host; the answer comes back unchanged too. */
async function forward(req: Request, to: string): Promise<Response> {
  const url = new URL(req.url);
  const headers = new Headers(req.headers);
  headers.delete("host");
  const res = await fetch(to + url.pathname + url.search, {
    method: req.method,
    headers,
    body: req.body,
    redirect: "manual",
  });
  const out = new Headers(res.headers);
  // fetch has already decoded the body, so its length and encoding no longer hold.
  out.delete("content-encoding");
  out.delete("content-length");
  return new Response(res.body, { status: res.status, headers: out });
}

export function serveStatic(root: string, options: StaticOptions = {}): StaticServer {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const rawPath = new URL(req.url).pathname;
      if (options.proxy && rawPath.startsWith(options.proxy.prefix)) {
        return await forward(req, options.proxy.to);
      }
      const generated = options.files?.[rawPath];
      if (generated !== undefined) {
        return new Response(generated, {
          headers: {
            "content-type": TYPES[extname(rawPath)] ?? "application/octet-stream",
            "cache-control": "no-store",
          },
        });
      }
      const path = normalize(decodeURIComponent(rawPath));
      if (path.includes("..")) return new Response("bad path", { status: 400 });
      const file = join(root, path.endsWith("/") ? path + "index.html" : path);
      try {
        const body = await Deno.readFile(file);
        return new Response(body, {
          headers: {
            "content-type": TYPES[extname(file)] ?? "application/octet-stream",
            "cache-control": "no-store",
          },
        });
      } catch {
        return new Response("not found", { status: 404 });
      }
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}
