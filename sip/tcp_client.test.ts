// The worker's own TCP connections (tcp_client.ts) against a real far end (Deno.listen in the
// test): one connection per address reused by sends, messages framed both ways and a reply going
// back on the same connection, a refused connect and a peer's close reported with why, a send
// after a close opening a new connection, and the listener's bounds (a trickled message, idle).
import { assert, assertEquals, assertMatch } from "../tests/helpers/assert.ts";
import { type StreamBounds } from "./tcp.ts";
import { TcpClient } from "./tcp_client.ts";
import type { StreamSource } from "./tcp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const message = (first: string, cseq: number) =>
  `${first}\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK${cseq}\r\nCSeq: ${cseq} INVITE\r\n` +
  `Content-Length: 0\r\n\r\n`;
const BOUNDS: StreamBounds = { messageTimeoutMs: 300, idleTimeoutMs: 800, perSource: 3, total: 9 };

/** A far end: its accepted connections, and everything each one received. */
function farEnd() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: { conn: Deno.TcpConn; received: string; ended: boolean }[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        const c = { conn, received: "", ended: false };
        conns.push(c);
        void (async () => {
          const buf = new Uint8Array(4096);
          try {
            for (let n; (n = await conn.read(buf)) !== null;) c.received += dec(buf.subarray(0, n));
          } catch { /* reset */ }
          c.ended = true;
        })();
      }
    } catch { /* closed */ }
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    port,
    peer: { address: "127.0.0.1", port },
    conns,
    close: async () => {
      listener.close();
      for (const c of conns) {
        try {
          c.conn.close();
        } catch { /* closed */ }
      }
      await accepting;
    },
  };
}

function client(bounds = BOUNDS) {
  const messages: { text: string; from: StreamSource }[] = [];
  const broken: string[] = [];
  const tcp = new TcpClient({
    message: (bytes, from) => void messages.push({ text: dec(bytes), from }),
    broken: (reason) => void broken.push(reason),
  }, bounds);
  return { tcp, messages, broken };
}

const until = async (what: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

Deno.test("sends to one address share one connection; answers come back framed on it", async () => {
  const far = farEnd();
  const { tcp, messages } = client();
  try {
    tcp.send(enc(message("INVITE sip:a@h SIP/2.0", 1)), far.peer);
    tcp.send(enc(message("INVITE sip:b@h SIP/2.0", 2)), far.peer);
    await until(() => (far.conns[0]?.received.match(/INVITE sip:/g) ?? []).length === 2);
    assertEquals(far.conns.length, 1);
    assertEquals(tcp.size, 1);
    // Two responses in one write, the second cut in two: framed as two messages.
    const both = message("SIP/2.0 100 Trying", 1) + message("SIP/2.0 180 Ringing", 2);
    await far.conns[0].conn.write(enc(both.slice(0, both.length - 10)));
    await new Promise((r) => setTimeout(r, 50));
    await far.conns[0].conn.write(enc(both.slice(both.length - 10)));
    await until(() => messages.length === 2);
    assertMatch(messages[0].text, /^SIP\/2.0 100 Trying/);
    assertMatch(messages[1].text, /^SIP\/2.0 180 Ringing/);
    // A request from the far end is answered on the same connection.
    await far.conns[0].conn.write(enc(message("BYE sip:w@h SIP/2.0", 3)));
    await until(() => messages.length === 3);
    messages[2].from.reply(enc(message("SIP/2.0 200 OK", 3)));
    await until(() => far.conns[0].received.includes("SIP/2.0 200 OK"));
    assertEquals(far.conns.length, 1);
    // A CRLFCRLF keep-alive is answered with CRLF.
    await far.conns[0].conn.write(enc("\r\n\r\n"));
    await until(() => far.conns[0].received.endsWith("\r\n\r\n\r\n"));
  } finally {
    await tcp.close();
    await far.close();
  }
});

Deno.test("a connect nothing answers resolves closed with why, and a later send retries", async () => {
  const far = farEnd();
  const port = far.port;
  await far.close(); // nothing listens there now
  const { tcp } = client();
  try {
    const c = tcp.connection({ address: "127.0.0.1", port });
    c.reply(enc(message("INVITE sip:a@h SIP/2.0", 1)));
    assertMatch(await c.closed, /^connect failed/);
    assertEquals(c.open, false);
    assertEquals(tcp.size, 0);
    assert(tcp.connection({ address: "127.0.0.1", port }) !== c, "a closed connection reused");
  } finally {
    await tcp.close();
  }
});

Deno.test("the peer's close is reported, and the next send opens a new connection", async () => {
  const far = farEnd();
  const { tcp } = client();
  try {
    const first = tcp.connection(far.peer);
    first.reply(enc(message("INVITE sip:a@h SIP/2.0", 1)));
    await until(() => far.conns[0]?.received.includes("INVITE") ?? false);
    far.conns[0].conn.close();
    assertEquals(await first.closed, "closed by the peer");
    tcp.send(enc(message("BYE sip:a@h SIP/2.0", 2)), far.peer);
    await until(() => far.conns[1]?.received.includes("BYE") ?? false);
    assertEquals(far.conns.length, 2);
  } finally {
    await tcp.close();
    await far.close();
  }
});

Deno.test("the listener's bounds: a trickled message and an idle connection are dropped", async () => {
  const far = farEnd();
  const { tcp, messages } = client();
  try {
    const c = tcp.connection(far.peer);
    c.reply(enc("\r\n\r\n"));
    await until(() => far.conns.length === 1);
    const started = Date.now();
    // A response's first bytes, then nothing: dropped at the message bound (300 ms).
    await far.conns[0].conn.write(enc("SIP/2.0 180 Ring"));
    assertEquals(await c.closed, "no whole message in time");
    const took = Date.now() - started;
    assert(took >= 250 && took < 700, `dropped after ${took} ms`);
    await until(() => far.conns[0].ended);

    const idle = tcp.connection(far.peer);
    const opened = Date.now();
    // Our own writes count as traffic: pinging every 400 ms for 1.2 s keeps it open past 800 ms.
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 400));
      assert(idle.open, `closed after ${Date.now() - opened} ms while we were writing`);
      idle.reply(enc("\r\n\r\n"));
    }
    assertEquals(await idle.closed, "idle");
    assert(Date.now() - opened >= 1150 + 750, `closed ${Date.now() - opened} ms after opening`);
    assertEquals(messages.length, 0);
  } finally {
    await tcp.close();
    await far.close();
  }
});

Deno.test("a stream without Content-Length is handed over as broken and closed", async () => {
  const far = farEnd();
  const { tcp, broken } = client();
  try {
    const c = tcp.connection(far.peer);
    c.reply(enc("\r\n\r\n"));
    await until(() => far.conns.length === 1);
    await far.conns[0].conn.write(enc("SIP/2.0 200 OK\r\nCSeq: 1 INVITE\r\n\r\n"));
    assertMatch(await c.closed, /^unframeable: Content-Length is required/);
    assertEquals(broken, ["Content-Length is required over TCP"]);
  } finally {
    await tcp.close();
    await far.close();
  }
});
