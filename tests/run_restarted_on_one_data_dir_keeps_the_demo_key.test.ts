// `deno task run` started again on the same data directory prints the same demo key as before,
// and that key still connects (open demo tabs and printed commands go on working). The raw key
// sits in the data directory, owner-only; once revoked, the next start makes a new one.
import { assert, assertEquals } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";
import { DEMO_KEY_FILE } from "../cli/demo_key_file.ts";

const ROOT = new URL("../", import.meta.url).pathname;

interface Printed {
  key: string;
  agent: string;
  adminToken: string;
}

/** Starts `deno task run`'s program, reads what its banner prints, stops it with SIGINT. */
async function runOnce(
  env: Record<string, string>,
  whileUp: (p: Printed) => Promise<void>,
): Promise<Printed> {
  const child = spawnDenoWith(["run", "-A", "cli/run.ts"], env, ROOT);
  try {
    const until = Date.now() + 180_000;
    while (!/Press Ctrl-C to stop/.test(child.output()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const out = child.output();
    const key = out.match(/--key (pk_\w+)/)?.[1];
    const agent = out.match(/--agent (ag_\w+)/)?.[1];
    const adminToken = out.match(/admin token: (adm_\w+)/)?.[1];
    assert(key && agent && adminToken, `banner not printed:\n${out}`);
    const printed = { key, agent, adminToken };
    await whileUp(printed);
    return printed;
  } finally {
    const status = await child.stop("SIGINT");
    assertEquals(status.code, 0, child.output());
  }
}

Deno.test("deno task run restarted on one data dir prints the same demo key and it still connects; a revoked one is replaced", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "run-data-" });
  const [api, worker, brain] = [freePort(), freePort(), freePort()];
  const base = `http://127.0.0.1:${api}`;
  const env = {
    DATA_DIR: dataDir,
    API_PORT: String(api),
    WORKER_PORT: String(worker),
    BRAIN_PORT: String(brain),
    DATABASE_URL: "", // the embedded database in DATA_DIR, whatever the test run uses
  };
  const connect = async (p: Printed) => {
    const res = await fetch(`${base}/api/v1/sessions.connect`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${p.key}`,
        origin: base,
        "content-type": "application/json",
      },
      body: JSON.stringify({ agent_id: p.agent }),
    });
    return { status: res.status, body: await res.text() };
  };
  const pageKey = async () =>
    (await (await fetch(`${base}/demo-config.js`)).text()).match(/pk_\w+/)?.[0];
  try {
    const first = await runOnce(env, async (p) => {
      assertEquals((await connect(p)).status, 200);
    });
    const file = `${dataDir}/${DEMO_KEY_FILE}`;
    assertEquals((await Deno.stat(file)).mode! & 0o777, 0o600);
    assert((await Deno.readTextFile(file)).includes(first.key));

    const second = await runOnce(env, async (p) => {
      const res = await connect(p);
      assertEquals(res.status, 200, res.body);
      assertEquals(await pageKey(), p.key);
      // Revoked by the operator: the next start must not print it again.
      const listed = await fetch(`${base}/api/v1/keys.list`, {
        method: "POST",
        headers: { authorization: `Bearer ${p.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: p.agent }),
      }).then((r) => r.json());
      // (agents.create made a secret key too; the run never prints it.)
      const live = listed.keys.filter((k: { kind: string; revoked_at: unknown }) =>
        k.kind === "publishable" && !k.revoked_at
      );
      assertEquals(live.length, 1, "exactly one demo page key works at a time");
      const r = await fetch(`${base}/api/v1/keys.revoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${p.adminToken}`, "content-type": "application/json" },
        body: JSON.stringify({ key_id: live[0].key_id }),
      });
      assertEquals(r.status, 200);
    });
    assertEquals(second.key, first.key);
    assertEquals(second.agent, first.agent);
    assertEquals(second.adminToken, first.adminToken);

    const third = await runOnce(env, async (p) => {
      const res = await connect(p);
      assertEquals(res.status, 200, res.body);
    });
    assert(third.key !== first.key, "the revoked key was printed again");
    assert((await Deno.readTextFile(file)).includes(third.key));
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
