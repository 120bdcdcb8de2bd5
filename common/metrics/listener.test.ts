// METRICS_PORT's listener: GET /metrics without credentials, nothing else.
import { Counter, Registry } from "prom-client";
import { assertEquals } from "../../tests/helpers/assert.ts";
import { setQuiet } from "../log.ts";
import { startMetricsListener } from "./listener.ts";
import { sample } from "./testing.ts";

Deno.test("the metrics listener serves GET /metrics unauthenticated, and nothing else", async () => {
  setQuiet(true);
  const registry = new Registry();
  new Counter({ name: "voice_test_things_total", help: "Things.", registers: [registry] }).inc(3);
  const listener = startMetricsListener({ hostname: "127.0.0.1", port: 0, registry });
  try {
    const base = `http://127.0.0.1:${listener.port}`;
    const res = await fetch(`${base}/metrics`);
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-type"), registry.contentType);
    assertEquals(sample(await res.text(), "voice_test_things_total"), 3);

    for (const [method, path] of [["GET", "/"], ["GET", "/healthz"], ["POST", "/metrics"]]) {
      const other = await fetch(`${base}${path}`, { method });
      assertEquals(other.status, 404, `${method} ${path}`);
      assertEquals((await other.json()).error.code, "not_found");
    }
  } finally {
    await listener.close();
  }
});
