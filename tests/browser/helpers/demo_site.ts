// The demo page on an origin of its own, as `deno task run` serves it: the built page at `/`,
// its API passed through under /api/, and /demo-config.js naming a publishable key made for
// exactly this origin (so the key's origin allowlist is checked for real).
import { assertEquals } from "../../helpers/assert.ts";
import { buildDemoPage } from "../../../web/build.ts";
import type { CallService } from "../../helpers/call_harness.ts";
import { serveStatic, type StaticServer } from "./static_server.ts";

/** Serves the demo page for `service`'s agent; the caller closes the returned server. */
export async function serveDemoPage(service: CallService): Promise<StaticServer> {
  const dist = await buildDemoPage();
  const files: Record<string, string> = {};
  const site = serveStatic(dist, { files, proxy: { prefix: "/api/", to: service.api.url } });
  const key = await service.api.admin("/api/v1/keys.create", {
    agent_id: service.tenant.agent_id,
    kind: "publishable",
    allowed_origins: [site.origin],
  });
  assertEquals(key.status, 200, JSON.stringify(key.body));
  // No apiUrl: the page uses its own origin.
  files["/demo-config.js"] = `globalThis.CALL_CONFIG = ${
    JSON.stringify({ publishableKey: key.body.session_key, agentId: service.tenant.agent_id })
  };`;
  return site;
}
