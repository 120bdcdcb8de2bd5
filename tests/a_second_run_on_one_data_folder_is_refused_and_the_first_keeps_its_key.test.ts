// Two `deno task run` on one data folder: the second is refused at once with a message naming
// the folder and the running one's process, and changes nothing: the first run's demo key file
// is untouched and the key it printed still connects.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";
import { DEMO_KEY_FILE } from "../cli/demo_key_file.ts";

const ROOT = new URL("../", import.meta.url).pathname;

Deno.test("a second deno task run on one data folder is refused and the first run's key keeps working", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "run-twice-" });
  const ports = () => ({
    API_PORT: String(freePort()),
    WORKER_PORT: String(freePort()),
    BRAIN_PORT: String(freePort()),
  });
  const firstPorts = ports();
  // The first as `deno task run` runs it, so that its pid is the run's own.
  const first = spawnDenoWith(["run", "-A", "cli/run.ts"], {
    DATA_DIR: dataDir,
    DATABASE_URL: "",
    ...firstPorts,
  }, ROOT);
  try {
    const until = Date.now() + 180_000;
    while (!/Press Ctrl-C to stop/.test(first.output()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const key = first.output().match(/--key (pk_\w+)/)?.[1];
    const agent = first.output().match(/--agent (ag_\w+)/)?.[1];
    assert(key && agent, `banner not printed:\n${first.output()}`);
    const keyFile = await Deno.readTextFile(`${dataDir}/${DEMO_KEY_FILE}`);

    // Other ports, the same folder: as a newcomer's second terminal would.
    const second = spawnDenoWith(["task", "-q", "run"], {
      DATA_DIR: dataDir,
      DATABASE_URL: "",
      ...ports(),
    }, ROOT);
    const timer = setTimeout(() => second.process.kill("SIGTERM"), 120_000);
    const status = await second.stop("SIGCONT"); // a no-op signal: waits for it to exit by itself
    clearTimeout(timer);
    assertEquals(status.code, 1, second.output());
    assertMatch(second.output(), /data folder .* is in use by another `deno task run`/);
    assert(second.output().includes(dataDir), second.output());
    assert(second.output().includes(`process ${first.process.pid}`), second.output());

    assertEquals(await Deno.readTextFile(`${dataDir}/${DEMO_KEY_FILE}`), keyFile);
    const base = `http://127.0.0.1:${firstPorts.API_PORT}`;
    const res = await fetch(`${base}/api/v1/sessions.connect`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, origin: base, "content-type": "application/json" },
      body: JSON.stringify({ agent_id: agent }),
    });
    assertEquals(res.status, 200, await res.text());
  } finally {
    const status = await first.stop("SIGINT");
    assertEquals(status.code, 0, first.output());
    await Deno.remove(dataDir, { recursive: true });
  }
});
