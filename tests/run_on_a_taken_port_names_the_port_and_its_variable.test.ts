// `deno task run` with one of its ports already taken (by a real listener, as another run would
// hold it) stops before starting anything, with one line naming the port, the variable that sets
// it and the likely cause, instead of an uncaught AddrInUse stack trace. `--help` prints the
// variables and starts nothing. `deno task api` and `worker` name a taken port the same way.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function runToExit(args: string[], env: Record<string, string>) {
  const child = spawnDenoWith(["task", "-q", "run", ...args], env, ROOT);
  // (SIGTERM, which `deno task` passes on: a run that did start stops with its worker.)
  const timer = setTimeout(() => child.process.kill("SIGTERM"), 120_000);
  const status = await child.process.status;
  clearTimeout(timer);
  await child.stop();
  const output = child.output();
  return { code: status.code, output };
}

for (const variable of ["API_PORT", "WORKER_PORT", "BRAIN_PORT"]) {
  Deno.test(`deno task run with ${variable} taken names the port and ${variable}`, async () => {
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (taken.addr as Deno.NetAddr).port;
    const dataDir = await Deno.makeTempDir({ prefix: "run-port-" });
    try {
      const env: Record<string, string> = {
        DATA_DIR: dataDir,
        DATABASE_URL: "",
        API_PORT: String(freePort()),
        WORKER_PORT: String(freePort()),
        BRAIN_PORT: String(freePort()),
      };
      env[variable] = String(port);
      const { code, output } = await runToExit([], env);
      assertEquals(code, 1, output);
      assertMatch(output, new RegExp(`Port ${port} \\(${variable}, TCP on 127\\.0\\.0\\.1\\)`));
      assertMatch(output, /another `deno task run`/);
      assert(!/^\s+at /m.test(output), `a stack trace was printed:\n${output}`);
      assert(!/Voice call service is running/.test(output), output);
    } finally {
      taken.close();
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}

Deno.test("deno task run --help prints its variables and starts nothing", async () => {
  const parent = await Deno.makeTempDir({ prefix: "run-help-" });
  const dataDir = `${parent}/data`;
  const api = freePort();
  const { code, output } = await runToExit(["--help"], {
    DATA_DIR: dataDir,
    API_PORT: String(api),
  });
  assertEquals(code, 0, output);
  for (const name of ["HOST", "API_PORT", "WORKER_PORT", "BRAIN_PORT", "DATA_DIR", "RTC_PORTS"]) {
    assertMatch(output, new RegExp(`^  ${name} `, "m"));
  }
  // Nothing started, nothing written.
  assertEquals(await Deno.stat(dataDir).then(() => true, () => false), false);
  const refused = await runToExit(["--port", "9000"], { DATA_DIR: dataDir });
  assertEquals(refused.code, 1, refused.output);
  assertMatch(refused.output, /takes no arguments/);
  assertEquals(await Deno.stat(dataDir).then(() => true, () => false), false);
  await Deno.remove(parent, { recursive: true });
});

// `deno task api` and `deno task worker` name a taken port the same way, before they open the
// database or register anything (DATABASE_URL points nowhere: reaching it would fail otherwise).
for (const [task, variable] of [["api", "API_PORT"], ["worker", "WORKER_PORT"]]) {
  Deno.test(`deno task ${task} with ${variable} taken names the port and ${variable}`, async () => {
    const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (taken.addr as Deno.NetAddr).port;
    try {
      const child = spawnDenoWith(["task", "-q", task], {
        HOST: "127.0.0.1",
        [variable]: String(port),
        DATABASE_URL: `postgres://nobody@127.0.0.1:${freePort()}/none`,
      }, ROOT);
      const timer = setTimeout(() => child.process.kill("SIGTERM"), 120_000);
      const status = await child.process.status;
      clearTimeout(timer);
      await child.stop();
      const output = child.output();
      assertEquals(status.code, 1, output);
      assertMatch(output, new RegExp(`Port ${port} \\(${variable}, TCP on 127\\.0\\.0\\.1\\)`));
      assertMatch(output, new RegExp(`deno task ${task}\\.`));
      assert(!/^\s+at /m.test(output), `a stack trace was printed:\n${output}`);
    } finally {
      taken.close();
    }
  });
}
