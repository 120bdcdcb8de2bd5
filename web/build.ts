// Bundles the browser pages into web/dist/ with esbuild: everything the page runs, the Pipecat
// client included, comes from this repository's node_modules; nothing is fetched at run time.
//
//   deno run -A web/build.ts        (or import { buildWeb } from a test)
import * as esbuild from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const WEB = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(WEB);
export const DIST = join(WEB, "dist");

/** Page directories under web/: each has an index.html and a main.ts. */
const PAGES = ["call"];

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

if (import.meta.main) {
  const dist = await buildWeb();
  console.log(`built ${PAGES.join(", ")} into ${dist}`);
}
