// `deno task demo`: the example brain and the demo page for a deployed API (the compose stack, a
// staging node). It makes the demo agent (pointed at this brain) and a publishable key for the
// page's origin through the admin API, like any operator, then serves the page and prints where
// to open it. The secrets come from the environment; none is printed.
//
//   API_URL        the API as the page and this process reach it (required)
//   ADMIN_TOKEN    the deployment's admin token (required)
//   DEMO_PORT      the page's port (8800); DEMO_PUBLIC_URL its origin as browsers open it
//   BRAIN_PORT     the example brain's port (8790); BRAIN_PUBLIC_URL as the workers dial it
import { Hono } from "hono";
import { join } from "node:path";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { buildDemoPage, DEMO_PAGE, DIST } from "../web/build.ts";
import { httpAdminCall } from "./api_client.ts";
import { ensureDemo } from "./demo_setup.ts";
import { serveFolder } from "./static_files.ts";
import { thisDenoCommand } from "./deno_command.ts";

async function waitReady(apiUrl: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const ok = await fetch(`${apiUrl}/readyz`).then((r) => (r.body?.cancel(), r.ok), () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the API at ${apiUrl} was not ready within ${ms / 1000} s`);
}

/** The page folder: built into the image at build time, built here otherwise. */
async function pageFolder(): Promise<string> {
  const built = join(DIST, DEMO_PAGE);
  const exists = await Deno.stat(join(built, "main.js")).then(() => true, () => false);
  return exists ? built : await buildDemoPage();
}

if (import.meta.main) {
  const env = (name: string) => Deno.env.get(name) || undefined;
  const apiUrl = env("API_URL")?.replace(/\/+$/, "");
  const adminToken = env("ADMIN_TOKEN");
  if (!apiUrl || !adminToken) {
    console.error("deno task demo needs API_URL and ADMIN_TOKEN (the deployment's admin token).");
    Deno.exit(2);
  }
  const host = env("HOST") ?? "0.0.0.0";
  const demoPort = Number(env("DEMO_PORT") ?? 8800);
  const brainPort = Number(env("BRAIN_PORT") ?? 8790);
  const pageOrigin = (env("DEMO_PUBLIC_URL") ?? `http://127.0.0.1:${demoPort}`).replace(/\/+$/, "");
  const brain = createExampleBrain().serve({ hostname: host, port: brainPort, path: "/brain" });
  const brainUrl = env("BRAIN_PUBLIC_URL") ?? `ws://127.0.0.1:${brainPort}/brain`;

  await waitReady(apiUrl, 120_000);
  const demo = await ensureDemo(httpAdminCall(apiUrl, adminToken), brainUrl, [pageOrigin]);
  const config = `globalThis.CALL_CONFIG = ${
    JSON.stringify({ apiUrl, publishableKey: demo.publishableKey, agentId: demo.agentId })
  };\n`;
  const urls = `Demo page:  ${pageOrigin}/   (press Call and talk to the example brain)
Console:    ${apiUrl}/console   (sign in with the deployment's ADMIN_TOKEN)
API:        ${apiUrl}/api/v1/
Brain:      ${brainUrl}   (demo agent ${demo.agentId})
Caller simulator:
  ${thisDenoCommand()} task call --api-url ${apiUrl} --key ${demo.publishableKey} --origin ${pageOrigin} --agent ${demo.agentId} --say "hello there"
`;
  const app = new Hono();
  app.get("/demo-config.js", (c) => c.body(config, 200, { "content-type": "text/javascript" }));
  // The same lines as printed at start, for `curl` after `docker-compose up -d`.
  app.get("/urls", (c) => c.text(urls));
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get("/*", serveFolder(await pageFolder()));
  const server = Deno.serve({ hostname: host, port: demoPort, onListen: () => {} }, app.fetch);
  console.log(`\n${urls}`);
  const stop = async () => {
    await server.shutdown();
    await brain.shutdown();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
}
