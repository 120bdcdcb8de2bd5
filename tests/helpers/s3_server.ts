// A real S3-compatible server on this machine for storage tests: @20minutes/s3rver (a maintained
// fork of s3rver that checks Signature V4; the original s3rver 3.7.1 accepts any V4 signature).
// It runs in-process under Deno, keeps objects in a temporary folder, and knows one account,
// S3RVER / S3RVER.
import S3rver from "@20minutes/s3rver";

export const S3_ACCESS_KEY_ID = "S3RVER";
export const S3_SECRET = "S3RVER";

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

export async function startS3Server(bucket: string, port = 0): Promise<S3Server> {
  const dir = await Deno.makeTempDir({ prefix: "s3-" });
  // deno-lint-ignore no-explicit-any
  let server: any;
  let running = false;
  const run = async (p: number) => {
    server = new S3rver({
      port: p,
      address: "127.0.0.1",
      silent: true,
      directory: dir,
      configureBuckets: [{ name: bucket }],
    });
    const port = (await server.run()).port as number;
    running = true;
    return port;
  };
  const actual = await run(port);
  const s: S3Server = {
    endpoint: `http://127.0.0.1:${actual}`,
    port: actual,
    dir,
    async object(b, key) {
      const { AwsClient } = await import("aws4fetch");
      const c = new AwsClient({
        accessKeyId: S3_ACCESS_KEY_ID,
        secretAccessKey: S3_SECRET,
        service: "s3",
        region: "us-east-1",
      });
      const r = await c.fetch(`${s.endpoint}/${b}/${key}`);
      const body = new Uint8Array(await r.arrayBuffer());
      return r.ok ? body : undefined;
    },
    async stop() {
      if (!running) return;
      running = false;
      await server.close();
    },
    async restart() {
      await run(actual);
    },
  };
  return s;
}
