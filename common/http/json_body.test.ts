// Request bodies are read with the size cap applied while they stream in, within a deadline, and a
// body that ends early is the client's fault (400), never a 500.
import { Hono } from "hono";
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { correlation } from "./correlation.ts";
import { handleErrors } from "./errors.ts";
import { type BodyLimits, MAX_BODY_BYTES, readJson } from "./json_body.ts";
import { logger, setQuiet } from "../log.ts";

function app(limits?: BodyLimits) {
  const a = new Hono();
  a.use("*", correlation);
  a.post("/", async (c) => c.json({ got: await readJson(c, false, limits) }));
  handleErrors(a, logger("json_body_test"));
  return a;
}

/** A body stream that counts the chunks pulled from it. */
function counted(chunk: Uint8Array, chunks: number) {
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (pulled >= chunks) return ctl.close();
      pulled++;
      ctl.enqueue(chunk.slice());
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

async function send(a: Hono, body: BodyInit, headers: Record<string, string> = {}) {
  const res = await a.request(
    "/",
    { method: "POST", body, headers, duplex: "half" } as RequestInit,
  );
  return { status: res.status, body: await res.json() };
}

Deno.test("a declared Content-Length over the limit is refused before the body is read", async () => {
  const body = counted(new Uint8Array(1024), 1000);
  const r = await send(app(), body.stream, { "content-length": String(MAX_BODY_BYTES + 1) });
  assertEquals([r.status, r.body.error.code], [413, "request_too_large"]);
  assertEquals(body.pulled(), 0);
});

Deno.test("an endless chunked body is cut off at the first chunk past the limit", async () => {
  const body = counted(new Uint8Array(16 * 1024).fill(0x20), Number.MAX_SAFE_INTEGER);
  const r = await send(app(), body.stream);
  assertEquals([r.status, r.body.error.code], [413, "request_too_large"]);
  assert(body.pulled() <= MAX_BODY_BYTES / (16 * 1024) + 2, `pulled ${body.pulled()} chunks`);
  assert(body.cancelled(), "the rest of the body is cancelled, not drained");
});

Deno.test("a body that stops short of its length is a 400, not a 500", async () => {
  setQuiet(true);
  let sent = false;
  const broken = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (!sent) {
        sent = true;
        ctl.enqueue(new TextEncoder().encode('{"agent_id":'));
      } else ctl.error(new Error("connection reset by peer"));
    },
  });
  const r = await send(app(), broken);
  assertEquals([r.status, r.body.error.code], [400, "invalid_request"]);
  assertEquals(r.body.error.message, "The request body could not be read to its end.");
});

Deno.test("a body slower than the deadline is a 408 in the envelope", async () => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new ReadableStream<Uint8Array>({
    start(ctl) {
      ctl.enqueue(new TextEncoder().encode("{"));
    },
    pull: () => new Promise<void>((r) => (timer = setTimeout(r, 5000))),
  });
  const started = performance.now();
  const r = await send(app({ timeoutMs: 100 }), stalled);
  clearTimeout(timer);
  assertEquals([r.status, r.body.error.code], [408, "request_timeout"]);
  assertEquals(r.body.error.details, { timeout_ms: 100 });
  assert(performance.now() - started < 2000);
});

Deno.test("over a real socket: a Content-Length the client never fills, then EOF, is a 400", async () => {
  setQuiet(true);
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    app().fetch,
  );
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    await conn.write(
      new TextEncoder().encode(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n" + '{"a":1',
      ),
    );
    await conn.closeWrite();
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
    // Either the server answers the short body with a 400, or it drops the connection without
    // an answer; never a 500.
    assert(!/^HTTP\/1\.1 5/.test(text), text);
    if (text) assert(/^HTTP\/1\.1 400/.test(text), text);
  } finally {
    ac.abort();
    await server.finished;
  }
});

Deno.test("a key holding an unpaired surrogate or U+0000 is a 400 naming its path, not a 500", async () => {
  for (const key of ["\\ud800", "x\\udc00y", "a\\u0000b"]) {
    const r = await send(app(), `{"init":{"ok":{"${key}":1}}}`);
    assertEquals([r.status, r.body.error.code], [400, "invalid_request"], key);
    assert(String(r.body.error.details.field).startsWith("init.ok."), r.body.error.details.field);
  }
  // A well-formed pair (an astral character) in a key is fine.
  assertEquals((await send(app(), `{"\\ud83d\\ude00":1}`)).status, 200);
});
