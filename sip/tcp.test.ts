// The SIP TCP transport's bounds over real sockets, with short deadlines so the tests run fast:
// a slow-loris and a silent connection are dropped, a connection over the per-source cap is
// closed at once, and a trunk streaming whole messages slowly is not.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { listenTcp, type StreamBounds } from "./tcp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const options = (cseq: number) =>
  `OPTIONS sip:x@h SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK${cseq}\r\nCSeq: ${cseq} OPTIONS\r\n` +
  `Content-Length: 0\r\n\r\n`;

function serve(bounds: Partial<StreamBounds> = {}) {
  const messages: string[] = [];
  const listener = listenTcp("127.0.0.1", 0, {
    message: (bytes) => void messages.push(new TextDecoder().decode(bytes)),
    broken: () => {},
  }, {
    messageTimeoutMs: 300,
    idleTimeoutMs: 600,
    perSource: 3,
    total: 100,
    ...bounds,
  });
  return { listener, messages };
}

const connect = (port: number) => Deno.connect({ hostname: "127.0.0.1", port });

/** Resolves when the server closes the connection (a read ends or fails). */
async function closedByServer(conn: Deno.TcpConn): Promise<true> {
  const buf = new Uint8Array(64);
  try {
    while ((await conn.read(buf)) !== null) { /* responses, if any */ }
  } catch { /* reset */ }
  return true;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a message trickled a byte at a time is dropped once its time is up", async () => {
  const { listener, messages } = serve();
  const conn = await connect(listener.port);
  const closed = closedByServer(conn);
  let sent = 0;
  let gone = false;
  void closed.then(() => (gone = true));
  const wire = enc(options(1));
  // At 20 ms a byte the message would take over a second: ten times the message deadline.
  while (!gone && sent < wire.length) {
    try {
      await conn.write(wire.subarray(sent, sent + 1));
    } catch {
      break;
    }
    sent++;
    await sleep(20);
  }
  await closed;
  assert(sent < wire.length, `the whole message went through (${sent} bytes)`);
  assertEquals(messages.length, 0);
  conn.close();
  assertEquals(listener.connections, 0);
  await listener.close();
});

Deno.test("a connection that sends nothing is dropped; one idle after a message is too", async () => {
  const { listener, messages } = serve();
  const silent = await connect(listener.port);
  const talker = await connect(listener.port);
  await talker.write(enc(options(1)));
  await Promise.all([closedByServer(silent), closedByServer(talker)]);
  assertEquals(messages.length, 1);
  silent.close();
  talker.close();
  await listener.close();
});

Deno.test("whole messages sent slowly, each in time, keep the connection for longer than one deadline", async () => {
  const { listener, messages } = serve({ messageTimeoutMs: 1000, idleTimeoutMs: 5000 });
  const conn = await connect(listener.port);
  // Six messages 300 ms apart (1.8 s in all, over the message deadline), each split in two
  // writes: every message is whole within its own deadline.
  for (let i = 1; i <= 6; i++) {
    const wire = enc(options(i));
    await conn.write(wire.subarray(0, 10));
    await sleep(100);
    await conn.write(wire.subarray(10));
    await sleep(200);
  }
  while (messages.length < 6) await sleep(10);
  assertEquals(listener.connections, 1);
  conn.close();
  await listener.close();
});

Deno.test("connections over the per-source cap are closed at once; the others stay", async () => {
  const { listener, messages } = serve({ messageTimeoutMs: 60_000, idleTimeoutMs: 60_000 });
  const kept = [
    await connect(listener.port),
    await connect(listener.port),
    await connect(
      listener.port,
    ),
  ];
  while (listener.connections < 3) await sleep(10);
  const extra = await connect(listener.port);
  assert(await closedByServer(extra));
  extra.close();
  // The three kept connections still carry messages.
  for (const [i, c] of kept.entries()) await c.write(enc(options(i + 1)));
  while (messages.length < 3) await sleep(10);
  assertEquals(listener.connections, 3);
  for (const c of kept) c.close();
  await listener.close();
});

Deno.test("connections over the total cap are closed at once", async () => {
  const { listener } = serve({ perSource: 100, total: 2, messageTimeoutMs: 60_000 });
  const kept = [await connect(listener.port), await connect(listener.port)];
  while (listener.connections < 2) await sleep(10);
  const extra = await connect(listener.port);
  assert(await closedByServer(extra));
  extra.close();
  assertEquals(listener.connections, 2);
  for (const c of kept) c.close();
  await listener.close();
});
