// GET /api/v1/capabilities needs no credential, so a page on any origin may read it (the demo page
// on its own origin builds its pickers from it); the credentialed routes stay without CORS.
import { assertEquals } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";

Deno.test("capabilities answer CORS for any origin; admin routes do not", async () => {
  const api = await startTestApi();
  try {
    const res = await fetch(`${api.url}/api/v1/capabilities`, {
      headers: { origin: "https://shop.example" },
    });
    await res.body?.cancel();
    assertEquals([res.status, res.headers.get("access-control-allow-origin")], [200, "*"]);
    const admin = await fetch(`${api.url}/api/v1/agents.list`, {
      method: "POST",
      headers: { origin: "https://shop.example", "content-type": "application/json" },
      body: "{}",
    });
    await admin.body?.cancel();
    assertEquals(admin.headers.get("access-control-allow-origin"), null);
  } finally {
    await api.close();
  }
});
