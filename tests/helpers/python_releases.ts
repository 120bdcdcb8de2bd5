// Current PyPI releases of websockets and protobuf for the Python SDK's tests, next to Debian's
// (python3-websockets 10.4, python3-protobuf 4.21). PyPI cannot be reached here; the machine keeps
// wheels of some releases on disk (PYTHON_WHEELS, default /opt/pypi/files), and pip installs them
// from there with --no-index into a folder that goes first on PYTHONPATH. A release not installed
// leaves Debian's in use, so one run can pair a new websockets with Debian's protobuf.
import { PYTHON } from "./python_brain.ts";

export const WHEELS = Deno.env.get("PYTHON_WHEELS") ?? "/opt/pypi/files";

/** The releases one run uses; undefined means Debian's package. */
export interface Releases {
  websockets?: string;
  protobuf?: string;
}

/** "websockets 17.1 and protobuf Debian's" */
export function describe(r: Releases): string {
  return `websockets ${r.websockets ?? "10.4 (Debian)"}, protobuf ${r.protobuf ?? "4.21 (Debian)"}`;
}

function versionsOnDisk(name: string): string[] {
  const found = new Set<string>();
  try {
    for (const entry of Deno.readDirSync(WHEELS)) {
      // Wheels for Debian's CPython 3.11 only: cp311 builds and the abi3 ones.
      const m = entry.name.match(new RegExp(`^${name}-([0-9.]+)-(cp311-cp311|cp3\\d+-abi3)-`));
      if (m) found.add(m[1]);
    }
  } catch { /* no wheel folder: no release to test */ }
  const key = (v: string) => v.split(".").map(Number);
  return [...found].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    }
    return 0;
  });
}

/**
 * The runs worth making with the wheels on disk: every websockets release and every protobuf
 * release at least once (paired in turn), and the newest of each beside Debian's other package.
 * Empty when no wheel is on disk.
 */
export function releaseRuns(): Releases[] {
  const ws = versionsOnDisk("websockets");
  const pb = versionsOnDisk("protobuf");
  if (ws.length === 0 || pb.length === 0) return [];
  const runs: Releases[] = [];
  for (let i = 0; i < Math.max(ws.length, pb.length); i++) {
    runs.push({
      websockets: ws[Math.min(i, ws.length - 1)],
      protobuf: pb[Math.min(i, pb.length - 1)],
    });
  }
  runs.push({ websockets: ws.at(-1) }, { protobuf: pb.at(-1) });
  return runs;
}

/** The newest websockets and protobuf on disk, or undefined when there are none. */
export function newestReleases(): Releases | undefined {
  const [ws, pb] = [versionsOnDisk("websockets"), versionsOnDisk("protobuf")];
  return ws.length && pb.length ? { websockets: ws.at(-1), protobuf: pb.at(-1) } : undefined;
}

/**
 * Installs `r` into a new folder and returns it, to put first on PYTHONPATH; checks that Python
 * then imports exactly those releases (and Debian's for the rest). `remove()` when done.
 */
export async function installReleases(
  r: Releases,
): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "python_releases_" });
  const remove = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  const wanted = Object.entries(r).filter(([, v]) => v).map(([k, v]) => `${k}==${v}`);
  const pip = await new Deno.Command(PYTHON, {
    args: [
      ...["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"],
      ...["--no-index", "--find-links", WHEELS, "--target", dir, ...wanted],
    ],
    env: { PIP_ROOT_USER_ACTION: "ignore", PIP_NO_CACHE_DIR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  if (!pip.success) {
    await remove();
    throw new Error(`pip could not install ${wanted.join(" ")}:\n${decode(pip.stderr)}`);
  }
  const seen = await new Deno.Command(PYTHON, {
    args: [
      "-c",
      "import websockets, google.protobuf as p; print(websockets.__version__, p.__version__)",
    ],
    env: { PYTHONPATH: dir, PYTHONDONTWRITEBYTECODE: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const [websockets, protobuf] = decode(seen.stdout).trim().split(" ");
  const expected = [r.websockets ?? "10.4", r.protobuf ?? "4.21"];
  if (!websockets?.startsWith(expected[0]) || !protobuf?.startsWith(expected[1])) {
    await remove();
    throw new Error(
      `Python imports websockets ${websockets} and protobuf ${protobuf}, not ${describe(r)}:\n` +
        decode(seen.stderr),
    );
  }
  return { dir, remove };
}

/** Runs `fn` with `r` installed (the folder to put first on PYTHONPATH), then removes them. */
export async function withReleases(r: Releases, fn: (packages: string) => Promise<void>) {
  const installed = await installReleases(r);
  try {
    await fn(installed.dir);
  } finally {
    await installed.remove();
  }
}

/**
 * Registers the test "`name` on websockets X, protobuf Y" with the newest wheels on disk; it is
 * ignored (and says so) where there are none.
 */
export function testOnNewestReleases(name: string, fn: (packages: string) => Promise<void>): void {
  const newest = newestReleases();
  Deno.test({
    name: `${name} on ${newest ? describe(newest) : "current releases (no wheel on disk)"}`,
    ignore: !newest,
    fn: () => withReleases(newest!, fn),
  });
}
