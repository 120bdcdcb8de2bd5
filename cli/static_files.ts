// Serves a built folder (the demo page) as static files: index.html for `/`, a content type by
// extension, nothing outside the folder.
import type { Context } from "hono";
import { extname, join, normalize } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".wav": "audio/wav",
};

export function serveFolder(dir: string) {
  return async (c: Context) => {
    const rel = normalize(decodeURIComponent(new URL(c.req.url).pathname)).replace(/^\/+/, "");
    if (rel.startsWith("..")) return c.notFound();
    const path = join(dir, rel === "" ? "index.html" : rel);
    try {
      const body = await Deno.readFile(path);
      return c.body(body, 200, {
        "content-type": TYPES[extname(path)] ?? "application/octet-stream",
        "cache-control": "no-store",
      });
    } catch {
      return c.notFound();
    }
  };
}
