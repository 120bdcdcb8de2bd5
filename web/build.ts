// Bundles the browser pages into web/dist/ with esbuild: everything the page runs, the Pipecat
// client included, comes from this repository's node_modules; nothing is fetched at run time.
//
//   deno run -A web/build.ts        (or import { buildWeb } / { buildDemoPage } from code)
import * as esbuild from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const WEB = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(WEB);
export const DIST = join(WEB, "dist");

/** Page directories under web/: each has an index.html and a main.ts. */
const PAGES = ["call"];

/** The demo page's directory under web/ (and under DIST once built). */
export const DEMO_PAGE = "call";

export async function buildWeb(): Promise<string> {
  try {
    for (const page of PAGES) {
      const out = join(DIST, page);
      await Deno.mkdir(out, { recursive: true });
      await esbuild.build({
        absWorkingDir: ROOT,
        entryPoints: [join(WEB, page, "main.ts")],
        outfile: join(out, "main.js"),
        bundle: true,
        format: "esm",
        platform: "browser",
        target: "es2022",
        sourcemap: true,
        logLevel: "warning",
        // Some dependencies test process.env.NODE_ENV; a browser has no `process`.
        define: { "process.env.NODE_ENV": '"production"' },
        // Drops comments: `deno check .` at the repo root walks web/dist too, and JSDoc
        // `import('./x.js')` types left in the bundle name files that are not shipped.
        minifyWhitespace: true,
      });
      await Deno.copyFile(join(WEB, page, "index.html"), join(out, "index.html"));
    }
  } finally {
    // esbuild keeps a service child process alive until stopped; tests and scripts must end.
    await esbuild.stop();
  }
  return DIST;
}

/**
 * Builds the pages and returns the demo page's built folder (index.html, main.js, main.js.map),
 * for a server to serve at `/`. Its index.html loads `demo-config.js` from beside itself if the
 * server provides one (a script setting `globalThis.CALL_CONFIG = {apiUrl, publishableKey,
 * agentId}`); without it the page reads the query string.
 */
export async function buildDemoPage(): Promise<string> {
  return join(await buildWeb(), DEMO_PAGE);
}

if (import.meta.main) {
  const dist = await buildWeb();
  console.log(`built ${PAGES.join(", ")} into ${dist}`);
}
