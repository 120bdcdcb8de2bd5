// `deno task run` from a fresh clone in a temporary folder: it prints the URL to open, the caller
// simulator completes a call against the demo agent it made, and SIGINT stops it leaving no
// process behind (its worker included).
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";
import { runCall } from "../cli/call.ts";

const ROOT = new URL("../", import.meta.url).pathname;

async function sh(cmd: string, args: string[], cwd?: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${text}`);
  return text;
}

function portOpen(port: number): Promise<boolean> {
  return Deno.connect({ hostname: "127.0.0.1", port }).then((c) => (c.close(), true), () => false);
}

Deno.test("deno task run from a fresh clone: URL, a simulated call, SIGINT leaves nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fresh-clone-" });
  await sh("git", ["clone", "-q", ROOT, `${dir}/service`]);
  const [api, worker, brain] = [freePort(), freePort(), freePort()];
  const child = spawnDenoWith(["task", "run"], {
    API_PORT: String(api),
    WORKER_PORT: String(worker),
    BRAIN_PORT: String(brain),
    DATABASE_URL: "", // the embedded defaults, whatever the test run uses
  }, `${dir}/service`);
  try {
    const until = Date.now() + 240_000;
    while (!/Open http:\/\/\S+ and press Call/.test(child.output()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assertMatch(child.output(), /Open http:\/\/127\.0\.0\.1:\d+\/ and press Call/);
    const page = await fetch(`http://127.0.0.1:${api}/`);
    assertEquals(page.status, 200);
    assertMatch(await page.text(), /<html/);

    const command = child.output().match(/deno task call (.*--say "hello there")/)?.[1];
    assert(command, `no simulator command printed:\n${child.output()}`);
    const args = [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const code = await runCall([...args, "--timeout", "30"], {}, io);
    assertEquals(code, 0, lines.join("\n"));
    assert(lines.some((l) => l.includes("You said")), lines.join("\n"));
  } finally {
    const status = await child.stop("SIGINT");
    assertEquals(status.code, 0, child.output());
    for (const port of [api, worker, brain]) {
      assertEquals(await portOpen(port), false, `port ${port} still open after SIGINT`);
    }
    const left = await new Deno.Command("pgrep", { args: ["-f", dir], stdout: "piped" }).output();
    assertEquals(new TextDecoder().decode(left.stdout).trim(), "", "processes left behind");
    await Deno.remove(dir, { recursive: true });
  }
});
