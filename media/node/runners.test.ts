// How a node plans its call runners from the environment: the runner count, each one's port,
// node id, offer URL and capacity, and how runner output is tagged.
import { assertEquals, assertThrows } from "../../tests/helpers/assert.ts";
import { loadSettings } from "../../common/settings.ts";
import { derivedCapacity, planRunners, runnerEnv, runnerPublicUrl, tagLine } from "./runners.ts";

const settings = (env: Record<string, string>) => loadSettings({ WORKER_PORT: "9000", ...env });

Deno.test("auto runs one runner per core, each on the next port with its own node id", () => {
  const plans = planRunners(
    settings({
      WORKER_PROCESSES: "auto",
      NODE_ID: "media-7",
      WORKER_PUBLIC_URL: "http://203.0.113.7:9000",
      METRICS_PORT: "9464",
    }),
    4,
  );
  assertEquals(plans.map((p) => [p.index, p.nodeId, p.port, p.publicUrl, p.metricsPort]), [
    [0, "media-7-r0", 9000, "http://203.0.113.7:9000", 9464],
    [1, "media-7-r1", 9001, "http://203.0.113.7:9001", 9465],
    [2, "media-7-r2", 9002, "http://203.0.113.7:9002", 9466],
    [3, "media-7-r3", 9003, "http://203.0.113.7:9003", 9467],
  ]);
});

Deno.test("with SIP_PORT each runner takes SIP on the next port and is told so; without, none does", () => {
  const plans = planRunners(settings({ WORKER_PROCESSES: "3", SIP_PORT: "5070" }), 3);
  assertEquals(plans.map((p) => p.sipPort), [5070, 5071, 5072]);
  assertEquals(plans.map((p) => runnerEnv({ SIP_PORT: "5070" }, p, 3).SIP_PORT), [
    "5070",
    "5071",
    "5072",
  ]);
  const none = planRunners(settings({ WORKER_PROCESSES: "2" }), 2);
  assertEquals(none.map((p) => "SIP_PORT" in runnerEnv({}, p, 2)), [false, false]);
});

Deno.test("a runner's offer URL keeps the node's host and path and moves the port", () => {
  assertEquals(runnerPublicUrl("https://m1.example.com", 2), "https://m1.example.com:445");
  assertEquals(
    runnerPublicUrl("http://m1.example.com/voice/", 1),
    "http://m1.example.com:81/voice",
  );
  assertEquals(runnerPublicUrl("http://127.0.0.1:8788", 0), "http://127.0.0.1:8788");
});

Deno.test("without WORKER_CAPACITY each runner's capacity comes from its cores and a call's cost", () => {
  // 1 core each × 0.75 target utilisation / 0.12 core per call = 6.25 → 6 calls.
  const plans = planRunners(settings({ WORKER_PROCESSES: "auto" }), 16);
  assertEquals(plans.length, 16);
  assertEquals(new Set(plans.map((p) => p.capacity)), new Set([6]));
  // A cheaper call, as the bench measures it, raises it: 0.75 / 0.08 = 9.4 → 9.
  const cheap = planRunners(
    settings({ WORKER_PROCESSES: "auto", WORKER_CALL_COST_CORES: "0.08" }),
    16,
  );
  assertEquals(cheap[0].capacity, 9);
  // Two runners on 8 cores have 4 cores each: 4 × 0.75 / 0.12 = 25.
  assertEquals(planRunners(settings({ WORKER_PROCESSES: "2" }), 8)[0].capacity, 25);
  // Never below one call, however costly a call is.
  assertEquals(derivedCapacity(0.5, 2), 1);
});

Deno.test("WORKER_CAPACITY is the node's, split evenly between its runners", () => {
  const plans = planRunners(settings({ WORKER_PROCESSES: "3", WORKER_CAPACITY: "10" }), 3);
  assertEquals(plans.map((p) => p.capacity), [4, 3, 3]);
  // One process, as before: 50 unless WORKER_CAPACITY says otherwise.
  assertEquals(planRunners(settings({}), 16).map((p) => p.capacity), [50]);
});

Deno.test("WORKER_PROCESSES is auto or a whole number of at least 1", () => {
  for (const bad of ["0", "-1", "1.5", "many"]) {
    assertThrows(() => settings({ WORKER_PROCESSES: bad }), Error);
  }
  assertThrows(() => settings({ WORKER_CALL_COST_CORES: "0" }), Error);
});

Deno.test("runner output is tagged with the runner's index, JSON lines with a field", () => {
  assertEquals(
    tagLine('{"time":"t","level":"info","component":"node","msg":"registered"}', 2),
    '{"time":"t","level":"info","component":"node","msg":"registered","runner":2}',
  );
  assertEquals(
    tagLine("2026-11-25T11:27:39.067Z info [node] registered node_id=n-r1", 1),
    "2026-11-25T11:27:39.067Z info [node] registered node_id=n-r1 runner=1",
  );
  assertEquals(tagLine("error: Uncaught TypeError", 0), "[runner 0] error: Uncaught TypeError");
});
