// A static file server on a loopback port, so a page has an origin of its own (different from
// the API's and the worker's, which makes their CORS handling real).
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

export function serveStatic(root: string): StaticServer {
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = normalize(decodeURIComponent(new URL(req.url).pathname));
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
