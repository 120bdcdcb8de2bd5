// HOST is the one bind choice of `deno task run`. Unset, nothing of the run is reachable on this
// machine's network address (before, its worker's HTTP listened on 0.0.0.0 while its API was on
// loopback). HOST=0.0.0.0 opens every listener and the run announces the network address: the
// printed URLs, the SIP redirect, and the offer URL a connect hands out all name it and answer on
// it, so a caller on another host is sent where it can reach.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";
import { firstNetworkAddress } from "../cli/run_address.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const NETWORK = firstNetworkAddress();

function reachable(hostname: string, port: number): Promise<boolean> {
  return Deno.connect({ hostname, port }).then((c) => (c.close(), true), () => false);
}

async function whileRunning(env: Record<string, string>, body: (out: string) => Promise<void>) {
  const child = spawnDenoWith(["run", "-A", "cli/run.ts"], env, ROOT);
  try {
    const until = Date.now() + 180_000;
    while (!/Press Ctrl-C to stop/.test(child.output()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assertMatch(child.output(), /Press Ctrl-C to stop/);
    await body(child.output());
  } finally {
    assertEquals((await child.stop("SIGINT")).code, 0, child.output());
  }
}

Deno.test({
  name:
    "deno task run listens on loopback unless HOST opens it, then announces its network address",
  ignore: NETWORK === undefined, // a machine with no network address has nothing to open
  async fn() {
    const network = NETWORK!;
    const dataDir = await Deno.makeTempDir({ prefix: "run-host-" });
    const api = freePort(), worker = freePort();
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      API_PORT: String(api),
      WORKER_PORT: String(worker),
      BRAIN_PORT: String(freePort()),
    };
    try {
      await whileRunning({ ...env, HOST: "" }, async (out) => {
        assertMatch(out, new RegExp(`Open http://127\\.0\\.0\\.1:${api}/`));
        assert(await reachable("127.0.0.1", worker));
        assertEquals(await reachable(network, api), false, "the API is on the network");
        assertEquals(await reachable(network, worker), false, "the worker is on the network");
      });

      await whileRunning({ ...env, HOST: "0.0.0.0" }, async (out) => {
        const base = `http://${network}:${api}`;
        assertMatch(out, new RegExp(`Open ${base.replaceAll(".", "\\.")}/`));
        assertMatch(out, new RegExp(`SIP redirect: +sip:${network.replaceAll(".", "\\.")}:\\d+`));
        assertEquals(await fetch(`${base}/`).then((r) => (r.body?.cancel(), r.status)), 200);
        const key = out.match(/--key (pk_\w+)/)?.[1];
        const agent = out.match(/--agent (ag_\w+)/)?.[1];
        const res = await fetch(`${base}/api/v1/sessions.connect`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            origin: base,
            "content-type": "application/json",
          },
          body: JSON.stringify({ agent_id: agent }),
        });
        const body = await res.json();
        assertEquals(res.status, 200, JSON.stringify(body));
        const endpoint = new URL(body.webrtc_request_params.endpoint);
        assertEquals(endpoint.hostname, network, "the worker announces its network address");
        const health = await fetch(`${endpoint.origin}/healthz`);
        await health.body?.cancel();
        assertEquals(health.status, 200);
      });
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});
