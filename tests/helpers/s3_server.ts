// A real S3-compatible server on this machine for storage tests: @20minutes/s3rver (a maintained
// fork of s3rver that checks Signature V4; the original s3rver 3.7.1 accepts any V4 signature).
// It runs under Node in a process of its own, installed by npm into test-artifacts/ on first use:
// kept out of the project's Deno dependencies, whose every process would otherwise warn about the
// package's missing bin file. It keeps objects in a temporary folder and knows one account,
// S3RVER / S3RVER.
import { AwsClient } from "aws4fetch";

export const S3_ACCESS_KEY_ID = "S3RVER";
export const S3_SECRET = "S3RVER";

const PACKAGE = "@20minutes/s3rver@5.0.0";
const HOME = new URL("../../test-artifacts/s3rver/", import.meta.url).pathname;

export interface S3Server {
  endpoint: string;
  port: number;
  dir: string;
  /** The object's bytes, or undefined when it is not there (read straight from the server). */
  object(bucket: string, key: string): Promise<Uint8Array | undefined>;
  stop(): Promise<void>;
  /** Starts again on the same port and folder (the "server came back" case). */
  restart(): Promise<void>;
}

/**
 * npm-installs the server once into test-artifacts/s3rver (the npm registry is reachable here).
 * The install goes to a folder of its own and is renamed into place, so two test processes
 * (tests/run.ts runs two at once) never use a half-written one: the first rename wins and the
 * other's copy is dropped.
 */
async function installed(): Promise<string> {
  const marker = `${HOME}node_modules/@20minutes/s3rver/package.json`;
  const present = () => Deno.stat(marker).then(() => true, () => false);
  if (await present()) return HOME;
  const parent = HOME.replace(/s3rver\/$/, "");
  await Deno.mkdir(parent, { recursive: true });
  const staging = await Deno.makeTempDir({ dir: parent, prefix: "s3rver-installing-" });
  try {
    const out = await new Deno.Command("npm", {
      args: [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        "--prefix",
        staging,
        PACKAGE,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`npm install ${PACKAGE} failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    await Deno.rename(staging, HOME).catch(async (err) => {
      if (!await present()) throw err;
    });
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
  return HOME;
}

const SCRIPT = `
const S3rver = require("@20minutes/s3rver");
const [port, directory, bucket] = process.argv.slice(1);
const server = new S3rver({ port: Number(port), address: "127.0.0.1", silent: true, directory,
  configureBuckets: [{ name: bucket }] });
server.run().then((a) => console.log("PORT " + a.port));
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
`;

export async function startS3Server(bucket: string, port = 0): Promise<S3Server> {
  const home = await installed();
  const dir = await Deno.makeTempDir({ prefix: "s3-" });
  let child: Deno.ChildProcess | undefined;
  const run = async (p: number): Promise<number> => {
    child = new Deno.Command("node", {
      args: ["-e", SCRIPT, String(p), dir, bucket],
      cwd: home,
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!/PORT \d+/.test(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the S3 server exited before listening: ${seen}`);
      seen += value;
    }
    reader.releaseLock();
    return Number(seen.match(/PORT (\d+)/)![1]);
  };
  const actual = await run(port);
  const client = new AwsClient({
    accessKeyId: S3_ACCESS_KEY_ID,
    secretAccessKey: S3_SECRET,
    service: "s3",
    region: "us-east-1",
  });
  const s: S3Server = {
    endpoint: `http://127.0.0.1:${actual}`,
    port: actual,
    dir,
    async object(b, key) {
      const r = await client.fetch(`${s.endpoint}/${b}/${key}`);
      const body = new Uint8Array(await r.arrayBuffer());
      return r.ok ? body : undefined;
    },
    async stop() {
      const c = child;
      if (!c) return;
      child = undefined;
      c.kill("SIGTERM");
      await c.status;
      await c.stdout.cancel().catch(() => {});
    },
    async restart() {
      await run(actual);
    },
  };
  return s;
}
