// The README's quick start from a fresh clone in a temporary folder, on a PATH with no `deno` (as
// after `npx -y deno@2.9.6 task run` on a new machine): nothing but the service's own lines come
// before its banner (no line per npm package set up), it prints the URL to open, the caller
// simulator command it prints completes a call when a shell runs it exactly as printed, and
// SIGINT stops it leaving no process behind (its worker included).
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freePort, spawnDenoWith } from "./helpers/process.ts";

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

/** A folder with every program on this PATH but `deno`: a machine where Deno is not installed. */
async function pathWithoutDeno(dir: string): Promise<string> {
  const bin = `${dir}/bin`;
  await Deno.mkdir(bin);
  for (const folder of (Deno.env.get("PATH") ?? "").split(":").filter(Boolean)) {
    try {
      for await (const e of Deno.readDir(folder)) {
        if (e.name === "deno") continue;
        await Deno.symlink(`${folder}/${e.name}`, `${bin}/${e.name}`).catch(() => {});
      }
    } catch { /* a PATH entry that is not a folder */ }
  }
  return bin;
}

/** The README's quick-start `run` command: its Deno version and the arguments after it. */
async function quickStart(): Promise<{ version: string; args: string[] }> {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const m = readme.match(/^npx -y deno@(\S+) (task[^#\n]*\brun)\s/m);
  assert(m, "no `npx -y deno@... task ... run` quick start in README.md");
  return { version: m[1], args: m[2].trim().split(/\s+/) };
}

Deno.test("the README's deno task run from a fresh clone: quiet start, URL, printed call works as printed, SIGINT leaves nothing", async () => {
  const { version, args } = await quickStart();
  // The quick start names this Deno; npx would fetch it, here the one running stands in for it.
  assertEquals(version, Deno.version.deno);
  const dir = await Deno.makeTempDir({ prefix: "fresh-clone-" });
  await sh("git", ["clone", "-q", ROOT, `${dir}/service`]);
  const PATH = await pathWithoutDeno(dir);
  const [api, worker, brain] = [freePort(), freePort(), freePort()];
  const child = spawnDenoWith(args, {
    PATH,
    API_PORT: String(api),
    WORKER_PORT: String(worker),
    BRAIN_PORT: String(brain),
    DATABASE_URL: "", // the embedded defaults, whatever the test run uses
    npm_lifecycle_event: "", // not started by npx, whatever started this test
    npm_command: "",
  }, `${dir}/service`);
  try {
    const until = Date.now() + 240_000;
    while (!/Press Ctrl-C to stop/.test(child.output()) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
    }
    const output = child.output();
    assertMatch(output, /Open http:\/\/127\.0\.0\.1:\d+\/ and press Call/);
    const beforeBanner = output.slice(0, output.indexOf("Voice call service is running"));
    const setUp = beforeBanner.split("\n").filter((l) => /\bInitialize\b/.test(l));
    assertEquals(setUp, [], `package set-up lines before the banner:\n${beforeBanner}`);
    const page = await fetch(`http://127.0.0.1:${api}/`);
    assertEquals(page.status, 200);
    assertMatch(await page.text(), /<html/);

    const command = output.match(/^\s*(\S.* task call .*--say "hello there")$/m)?.[1];
    assert(command, `no simulator command printed:\n${output}`);
    // Run by a shell exactly as printed, from the clone, with no `deno` on its PATH.
    const call = await new Deno.Command("/bin/sh", {
      args: ["-c", `${command} --timeout 30`],
      cwd: `${dir}/service`,
      env: { PATH, NO_COLOR: "1", npm_lifecycle_event: "", npm_command: "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(call.stdout) + new TextDecoder().decode(call.stderr);
    assertEquals(call.code, 0, `${command}\n${said}`);
    assert(said.includes("You said"), said);
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
