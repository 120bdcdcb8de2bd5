// The worker's outbound INVITE over TCP (media/sip/uac.ts with sip/tcp_client.ts) from the UAS to a
// raw TCP listener playing the trunk, on a hand-turned clock: sent once (no Timer A over a reliable
// transport, RFC 3261 17.1.1.2) and still given up by Timer B; a connection the trunk closes before
// its final answer fails the dial; answered, the ACK goes on the connection, and the trunk's INFO
// and BYE sent on it reach the call's dialog and are answered on it; CANCEL goes on it too.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { ManualClock } from "./helpers/manual_clock.ts";
import { header, type SipMessage, type SipRequest } from "../sip/message.ts";
import { SipStreamFramer } from "../sip/stream.ts";
import { parseMessage } from "../sip/message.ts";
import { SipUas } from "../media/sip/uas.ts";
import type { CallEvent } from "../media/sip/uas_types.ts";
import { type DialFailure, PlacedCall } from "../media/sip/uac.ts";
import { openRtpPort } from "../media/sip/rtp_port.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const SDP = "v=0\r\no=t 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
  "m=audio 4000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n";

async function placing() {
  const clock = new ManualClock();
  const events: CallEvent[] = [];
  const uas = new SipUas({
    host: "127.0.0.1",
    lookup: () => undefined,
    clock,
    onEvent: (e) => events.push(e),
  });
  await uas.listen();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const got: SipMessage[] = [];
  const conns: Deno.TcpConn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        conns.push(conn);
        void (async () => {
          const framer = new SipStreamFramer();
          const buf = new Uint8Array(4096);
          try {
            for (let n; (n = await conn.read(buf)) !== null;) {
              for (const f of framer.push(buf.subarray(0, n))) {
                const p = f.kind === "message" ? parseMessage(f.bytes, true) : undefined;
                if (p?.ok) got.push(p.message);
              }
            }
          } catch { /* closed */ }
        })();
      }
    } catch { /* closed */ }
  })();
  const port0 = await openRtpPort("127.0.0.1");
  let closing: Promise<void> | undefined;
  const rtp = { ...port0, port: port0.port, close: () => (closing ??= port0.close()) };
  const outcome: { failed?: DialFailure; answered?: boolean; rang?: boolean } = {};
  const call = new PlacedCall(uas.placing(), {
    to: "+15550123",
    from: "+15550100",
    trunk: { address: "127.0.0.1", port },
    transport: "TCP",
    trunkHost: `127.0.0.1:${port}`,
    ringTimeoutMs: 5_000,
    rtp,
  }, {
    ringing: () => (outcome.rang = true),
    answered: () => (outcome.answered = true),
    failed: (f) => (outcome.failed = f),
  });
  call.start();
  const requests = (method: string) =>
    got.filter((r): r is SipRequest => r.kind === "request" && r.method === method);
  const responses = () => got.filter((r) => r.kind === "response");
  const until = async (pred: () => boolean, what: string) => {
    for (let i = 0; i < 300 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
    assert(pred(), `${what}; got ${got.map((m) => header(m, "CSeq")).join(", ")}`);
  };
  /** The trunk writes `text` on the worker's connection. */
  const write = (text: string) => conns[0].write(enc(text));
  const answer = (req: SipRequest, status: number, reason: string, sdp = "") => {
    const to = header(req, "To")!;
    return write([
      `SIP/2.0 ${status} ${reason}`,
      ...["Via", "From", "Call-ID", "CSeq"].map((h) => `${h}: ${header(req, h)}`),
      `To: ${to}${status > 100 && !to.includes("tag=") ? ";tag=trunk" : ""}`,
      `Contact: <sip:trunk@127.0.0.1:${port};transport=tcp>`,
      ...(sdp ? ["Content-Type: application/sdp"] : []),
      `Content-Length: ${sdp.length}`,
      "",
      sdp,
    ].join("\r\n"));
  };
  const close = async () => {
    await uas.close();
    await rtp.close();
    listener.close();
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await accepting;
  };
  return { clock, call, events, conns, requests, responses, until, write, answer, outcome, close };
}

Deno.test("over TCP the INVITE is sent once, with a TCP Via and Contact, and Timer B still fails it", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    const invite = t.requests("INVITE")[0];
    assertMatch(header(invite, "Via")!, /^SIP\/2\.0\/TCP 127\.0\.0\.1:\d+;branch=z9hG4bK\w+$/);
    assertMatch(header(invite, "Contact")!, /^<sip:127\.0\.0\.1:\d+;transport=tcp>$/);
    for (const ms of [500, 1000, 2000, 4000]) t.clock.advance(ms);
    await new Promise((r) => setTimeout(r, 100));
    assertEquals(t.requests("INVITE").length, 1);
    assertEquals(t.outcome.failed, undefined);
    t.clock.advance(32_000);
    assertEquals(t.outcome.failed, { reason: "dial_failed", status: "failed", sip: "timeout" });
  } finally {
    await t.close();
  }
});

Deno.test("a connection the trunk closes after 100 Trying fails the dial, naming why", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    await t.answer(t.requests("INVITE")[0], 100, "Trying");
    await new Promise((r) => setTimeout(r, 50));
    t.conns[0].close();
    await t.until(() => t.outcome.failed !== undefined, "the drop did not fail the dial");
    assertEquals(t.outcome.failed, {
      reason: "dial_failed",
      status: "failed",
      sip: "TCP connection: closed by the peer",
    });
  } finally {
    await t.close();
  }
});

Deno.test("answered over TCP: ACK on the connection; the trunk's INFO and BYE on it reach the dialog", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    const invite = t.requests("INVITE")[0];
    await t.answer(invite, 200, "OK", SDP);
    await t.until(() => t.requests("ACK").length === 1, "no ACK on the connection");
    assert(t.outcome.answered, "not answered");
    assertMatch(header(t.requests("ACK")[0], "Via")!, /^SIP\/2\.0\/TCP /);
    const inDialog = (method: string, cseq: number, body = "", type = "") =>
      t.write([
        `${method} sip:127.0.0.1 SIP/2.0`,
        `Via: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKtrunk${cseq}`,
        `From: <sip:+15550123@127.0.0.1>;tag=trunk`,
        `To: ${header(invite, "From")}`,
        `Call-ID: ${header(invite, "Call-ID")}`,
        `CSeq: ${cseq} ${method}`,
        ...(type ? [`Content-Type: ${type}`] : []),
        `Content-Length: ${body.length}`,
        "",
        body,
      ].join("\r\n"));
    await inDialog("INFO", 1, "Signal=5\r\nDuration=160\r\n", "application/dtmf-relay");
    await t.until(() => t.events.some((e) => e.type === "dtmf"), "INFO did not reach the dialog");
    await inDialog("BYE", 2);
    await t.until(
      () => t.events.some((e) => e.type === "ended" && e.reason === "caller_hung_up"),
      "BYE did not end the call",
    );
    const answers = t.responses().map((r) =>
      `${r.kind === "response" && r.status} ${header(r, "CSeq")}`
    );
    assertEquals(answers, ["200 1 INFO", "200 2 BYE"]);
    assertEquals(t.conns.length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("at the ring timeout the CANCEL goes on the connection once; the 487 is ACKed on it", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    const invite = t.requests("INVITE")[0];
    await t.answer(invite, 180, "Ringing");
    await t.until(() => t.outcome.rang === true, "180 is not ringing");
    t.clock.advance(5_000);
    await t.until(() => t.requests("CANCEL").length === 1, "no CANCEL");
    t.clock.advance(4_000); // Timer E would have resent it over UDP
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(t.requests("CANCEL").length, 1);
    const cancel = t.requests("CANCEL")[0];
    await t.answer(cancel, 200, "OK");
    await t.answer(invite, 487, "Request Terminated");
    await t.until(() => t.requests("ACK").length === 1, "no ACK of the 487");
    assertEquals(t.outcome.failed?.reason, "no_answer");
    assertEquals(t.conns.length, 1);
  } finally {
    await t.close();
  }
});
