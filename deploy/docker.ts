// Docker on this machine for the stack check: a running engine, the `debian:bookworm-slim` base
// (made locally with debootstrap when no registry can be reached: the Dockerfiles keep the public
// name, so the same files build anywhere), and a command runner that fails with the output.

/** Runs `cmd args`, returns stdout; throws with stderr on a non-zero exit. */
export async function run(
  cmd: string,
  args: string[],
  opts: { env?: Record<string, string>; stdin?: Uint8Array } = {},
): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    env: opts.env,
    stdin: opts.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (opts.stdin) {
    const w = child.stdin.getWriter();
    await w.write(opts.stdin);
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr);
    throw new Error(
      `${cmd} ${args.join(" ")} exited ${out.code}:\n${text.slice(-4000)}\n${err.slice(-4000)}`,
    );
  }
  return text;
}

const ok = (cmd: string, args: string[]) => run(cmd, args).then(() => true, () => false);

/** Starts `dockerd` when no engine answers (CI installs docker.io), and waits for it. */
export async function ensureDocker(): Promise<void> {
  if (await ok("docker", ["info"])) return;
  await run("bash", ["-c", "setsid dockerd >>/tmp/dockerd.log 2>&1 < /dev/null &"]);
  for (let i = 0; i < 60; i++) {
    if (await ok("docker", ["info"])) return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error("dockerd did not start (see /tmp/dockerd.log)");
}

/** The Debian mirror apt on this machine uses, for debootstrap. */
async function aptMirror(): Promise<string> {
  const sources = [
    "/etc/apt/sources.list.d/debian.sources",
    "/etc/apt/sources.list",
  ];
  for (const path of sources) {
    const text = await Deno.readTextFile(path).catch(() => "");
    const uri = text.match(/^URIs:\s*(\S+)/m)?.[1] ??
      text.match(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/m)?.[1];
    if (uri) return uri;
  }
  return "http://deb.debian.org/debian";
}

/**
 * Makes `debian:bookworm-slim` when it is missing: debootstrap's minbase, without apt's lists and
 * downloaded packages, docs, man pages and locales (as the official slim image drops them).
 * Returns what was done, with the time it took and the image size.
 */
export async function ensureBaseImage(): Promise<string> {
  const size = async () =>
    (Number((await run("docker", ["image", "inspect", "-f", "{{.Size}}", "debian:bookworm-slim"]))
      .trim()) / 1e6).toFixed(0) + " MB";
  if (await ok("docker", ["image", "inspect", "debian:bookworm-slim"])) {
    return `present (${await size()})`;
  }
  const t0 = performance.now();
  const rootfs = await Deno.makeTempDir({ prefix: "bookworm-" });
  try {
    await run("debootstrap", ["--variant=minbase", "bookworm", rootfs, await aptMirror()]);
    await run("bash", [
      "-c",
      `cd "${rootfs}" && rm -rf var/cache/apt/archives/*.deb var/lib/apt/lists/* usr/share/doc/* ` +
      `usr/share/man/* usr/share/info/* && find usr/share/locale -mindepth 1 -maxdepth 1 ` +
      `! -name locale.alias -exec rm -rf {} +`,
    ]);
    await run("bash", [
      "-c",
      `tar -C "${rootfs}" -c . | docker import - debian:bookworm-slim`,
    ]);
  } finally {
    await Deno.remove(rootfs, { recursive: true }).catch(() => {});
  }
  return `made with debootstrap in ${
    ((performance.now() - t0) / 1000).toFixed(0)
  } s (${await size()})`;
}
