// The compose stack, end to end on this machine (`deno task test:deploy`, run by .ci/run): makes
// the debian:bookworm-slim base if it is missing, builds the images, starts PostgreSQL, two APIs,
// two workers and the demo, places a whole call through it with the caller simulator, checks the
// metrics counted it, drains one worker with SIGTERM while a call is in flight, kills the other
// with SIGKILL, and tears the stack down leaving no container. Prints the image sizes, build and
// start-up times it measured.
import { assert, assertEquals, assertMatch } from "../tests/helpers/assert.ts";
import { callerSpeechWav } from "../tests/helpers/audio.ts";
import { freePort } from "../tests/helpers/process.ts";
import { runCall } from "../cli/call.ts";
import { TestCaller } from "../caller/caller.ts";
import { ensureBaseImage, ensureDocker, run } from "./docker.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const COMPOSE_FILE = `${ROOT}deploy/compose.yaml`;
const PROJECT = `voicecheck${Date.now() % 100000}`;
const DRAIN_SECONDS = 8;
const STALE_SECONDS = 4;

const ports = {
  PG_PORT: freePort(),
  API1_PORT: freePort(),
  API2_PORT: freePort(),
  WORKER1_PORT: freePort(),
  WORKER2_PORT: freePort(),
  API1_METRICS_PORT: freePort(),
  API2_METRICS_PORT: freePort(),
  WORKER1_METRICS_PORT: freePort(),
  WORKER2_METRICS_PORT: freePort(),
  DEMO_PORT: freePort(),
  BRAIN_PORT: freePort(),
};
const secret = () => crypto.randomUUID().replaceAll("-", "");
const adminToken = `adm_${secret()}`;
const env: Record<string, string> = {
  ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
  POSTGRES_PASSWORD: secret(),
  ADMIN_TOKEN: adminToken,
  KEY_HASH_SECRET: secret() + secret(),
  DRAIN_TIMEOUT_SECONDS: String(DRAIN_SECONDS),
  NODE_STALE_SECONDS: String(STALE_SECONDS),
  RESTART_POLICY: "no", // a killed worker must stay dead for the worker_lost check
  // CAs this machine added locally (a TLS-inspecting proxy's) go into the images' trust store.
  EXTRA_CA_CERTS: await localCaCertificates(),
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
};
async function localCaCertificates(): Promise<string> {
  const dir = "/usr/local/share/ca-certificates";
  const pems: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && e.name.endsWith(".crt")) {
        pems.push(await Deno.readTextFile(`${dir}/${e.name}`));
      }
    }
  } catch { /* none */ }
  return pems.join("\n");
}

const api = `http://127.0.0.1:${ports.API1_PORT}`;
const api2 = `http://127.0.0.1:${ports.API2_PORT}`;
const workers = {
  "worker-1": `http://127.0.0.1:${ports.WORKER1_PORT}`,
  "worker-2": `http://127.0.0.1:${ports.WORKER2_PORT}`,
};

function compose(...args: string[]) {
  return run("docker-compose", ["-f", COMPOSE_FILE, "-p", PROJECT, ...args], { env });
}

async function admin(path: string, body: unknown, base = api) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what}: not within ${ms / 1000} s`);
}

const ready = (url: string) => () =>
  fetch(`${url}/readyz`).then((r) => (r.body?.cancel(), r.ok ? true : undefined));

async function session(id: string): Promise<Record<string, string>> {
  return await admin("/api/v1/sessions.get", { session_id: id });
}

async function metric(url: string, name: string): Promise<number> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text());
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return sum;
}

/** An echo call held open by a werift caller, on whichever worker connect chooses. */
async function echoCall(agentId: string, sk: string) {
  const res = await fetch(`${api}/api/v1/sessions.connect`, {
    method: "POST",
    headers: { authorization: `Bearer ${sk}`, "content-type": "application/json" },
    body: JSON.stringify({ agent_id: agentId }),
  });
  const body = await res.json();
  assertEquals(res.status, 200, JSON.stringify(body));
  const caller = await TestCaller.connect({
    offerUrl: body.webrtc_request_params.endpoint,
    headers: body.webrtc_request_params.headers,
  });
  await caller.ready();
  const id = body.session_id as string;
  const row = await until("the call is active", 10_000, async () => {
    const s = await session(id);
    return s.status === "active" ? s : undefined;
  });
  return { caller, id, nodeId: row.node_id as keyof typeof workers };
}

Deno.test("the compose stack runs whole calls, counts them, drains and loses workers", async (t) => {
  await ensureDocker();
  const figures: string[] = [];
  await t.step("the base image and the images build", async () => {
    figures.push(`base image: ${await ensureBaseImage()}`);
    const t0 = performance.now();
    await compose("build");
    figures.push(`build: ${((performance.now() - t0) / 1000).toFixed(0)} s (with the layer cache)`);
    for (const image of ["voice-api:latest", "voice-worker:latest", "voice-postgres:latest"]) {
      const size = Number(
        (await run("docker", ["image", "inspect", "-f", "{{.Size}}", image])).trim(),
      );
      figures.push(`${image}: ${(size / 1e6).toFixed(0)} MB`);
    }
  });

  try {
    await t.step("the stack starts: two APIs, two workers, the demo", async () => {
      const t0 = performance.now();
      await compose("up", "-d");
      const up = async (what: string, url: string) => {
        await until(`${what} ready`, 180_000, ready(url));
        figures.push(`${what} ready ${((performance.now() - t0) / 1000).toFixed(1)} s after up`);
      };
      await Promise.all([
        up("api-1", api),
        up("api-2", api2),
        up("worker-1", workers["worker-1"]),
        up("worker-2", workers["worker-2"]),
      ]);
      const caps = await until("both workers registered", 30_000, async () => {
        const c = await fetch(`${api}/api/v1/capabilities`).then((r) => r.json());
        return c.live_nodes === 2 ? c : undefined;
      });
      assertEquals(caps.live_nodes, 2);
    });

    let agentId = "", sk = "";
    await t.step("an echo agent for the drain and loss checks", async () => {
      const made = await admin("/api/v1/agents.create", {
        tenant: "stack-check",
        name: "Echo",
        brain_url: "echo:",
      });
      agentId = made.agent.agent_id;
      sk = made.session_key;
    });

    await t.step("a whole call through the stack: greeting, two turns, exit 0", async () => {
      const urls = await until(
        "the demo page is up",
        120_000,
        () =>
          fetch(`http://127.0.0.1:${ports.DEMO_PORT}/urls`).then((r) =>
            r.ok ? r.text() : undefined
          ),
      );
      assertMatch(urls, /Console: +http:\/\/127\.0\.0\.1:\d+\/console/);
      const command = urls.match(/--key (pk_\w+) --origin (\S+) --agent (ag_\w+)/);
      assert(command, `the demo prints the caller command:\n${urls}`);
      const [, pk, origin, demoAgent] = command;
      const out: string[] = [];
      const code = await runCall(
        [
          "--api",
          api,
          "--key",
          pk,
          "--origin",
          origin,
          "--agent",
          demoAgent,
          "--wav",
          await callerSpeechWav("hello there how are you"),
          "--wav",
          await callerSpeechWav("tell me about the weather today"),
          "--json",
        ],
        {},
        { out: (s) => out.push(s), err: (s) => out.push(s) },
      );
      const result = JSON.parse(out.find((l) => l.startsWith("{")) ?? "{}");
      assertEquals(code, 0, out.join("\n"));
      assert(result.greeting?.bot?.length, `the greeting was heard: ${out.join("\n")}`);
      assertEquals(result.turns?.length, 2, out.join("\n"));

      const started = await metric(
        `http://127.0.0.1:${ports.WORKER1_METRICS_PORT}`,
        "voice_calls_started_total",
      ) +
        await metric(`http://127.0.0.1:${ports.WORKER2_METRICS_PORT}`, "voice_calls_started_total");
      assertEquals(started, 1, "the workers' /metrics counted the call");
      const connects = await metric(
        `http://127.0.0.1:${ports.API1_METRICS_PORT}`,
        "voice_connect_duration_seconds_count",
      );
      assert(connects >= 1, "the API's /metrics counted the connect");
    });

    let survivor: keyof typeof workers = "worker-2";
    await t.step(
      "SIGTERM drains a worker: its call ends worker_shutdown after the drain",
      async () => {
        const call = await echoCall(agentId, sk);
        const victim = call.nodeId;
        survivor = victim === "worker-1" ? "worker-2" : "worker-1";
        const signalled = performance.now();
        await run("docker", ["kill", "--signal", "SIGTERM", `${PROJECT}_${victim}_1`]);
        await until(
          "the node stops being ready",
          5_000,
          async () =>
            (await fetch(`${workers[victim]}/readyz`).then((r) => (r.body?.cancel(), r.status))) ===
                503
              ? true
              : undefined,
        );
        // A new connect goes to the other worker (the draining one is out within a second).
        await new Promise((r) => setTimeout(r, 1_500));
        const next = await echoCall(agentId, sk);
        assertEquals(next.nodeId, survivor, "a new call goes to the worker that is not draining");
        await next.caller.hangUp();
        assertEquals((await session(call.id)).status, "active", "the call goes on while draining");
        const ended = await until(
          "the drained call ends",
          (DRAIN_SECONDS + 20) * 1000,
          async () => {
            const s = await session(call.id);
            return s.status === "active" ? undefined : s;
          },
        );
        const after = (performance.now() - signalled) / 1000;
        assertEquals([ended.status, ended.end_reason], ["ended", "worker_shutdown"]);
        assert(after >= DRAIN_SECONDS - 0.5, `ended ${after.toFixed(1)} s after SIGTERM`);
        const exit = await until("the worker container exits", 30_000, async () => {
          const state = (await run("docker", [
            "inspect",
            "-f",
            "{{.State.Running}} {{.State.ExitCode}}",
            `${PROJECT}_${victim}_1`,
          ])).trim();
          return state.startsWith("false") ? state : undefined;
        });
        assertEquals(exit, "false 0", "the drained worker exits 0");
        figures.push(`drain: call ended worker_shutdown ${after.toFixed(1)} s after SIGTERM`);
        await call.caller.hangUp();
      },
    );

    await t.step("SIGKILL on the other worker: its session fails worker_lost", async () => {
      const call = await echoCall(agentId, sk);
      assertEquals(call.nodeId, survivor);
      const killed = performance.now();
      await run("docker", ["kill", "--signal", "SIGKILL", `${PROJECT}_${survivor}_1`]);
      const lost = await until("the session fails", (STALE_SECONDS + 15) * 1000, async () => {
        const s = await session(call.id);
        return s.status === "active" ? undefined : s;
      });
      assertEquals([lost.status, lost.end_reason], ["failed", "worker_lost"]);
      figures.push(
        `SIGKILL: session failed worker_lost ${
          ((performance.now() - killed) / 1000).toFixed(1)
        } s after the kill (stale window ${STALE_SECONDS} s)`,
      );
      await call.caller.hangUp();
    });
  } finally {
    await t.step("the stack comes down, leaving no container", async () => {
      await compose("down", "-v", "--remove-orphans", "-t", "5").catch((e) => console.error(e));
      const left = await run("docker", [
        "ps",
        "-a",
        "-q",
        "--filter",
        `label=com.docker.compose.project=${PROJECT}`,
      ]);
      assertEquals(left.trim(), "", "no container is left");
    });
    console.log(`\nstack figures:\n  ${figures.join("\n  ")}`);
  }
});
