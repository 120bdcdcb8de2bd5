// The worker's outbound INVITE (media/sip/uac.ts) from the UAS's real socket to a raw UDP socket
// playing the trunk, on a hand-turned clock: Timer A and B when nothing answers, no CANCEL before
// a provisional (RFC 3261 9.1), CANCEL on the INVITE's branch at the ring timeout and the 487's
// ACK, a 200 that crosses the CANCEL ACKed and hung up, a retransmitted 200 ACKed again.
import dgram from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { ManualClock } from "./helpers/manual_clock.ts";
import { header, parseMessage, type SipRequest } from "../sip/message.ts";
import { SipUas } from "../media/sip/uas.ts";
import { type DialFailure, PlacedCall } from "../media/sip/uac.ts";
import { openRtpPort } from "../media/sip/rtp_port.ts";

async function placing(ringTimeoutMs = 5_000) {
  const clock = new ManualClock();
  const uas = new SipUas({ host: "127.0.0.1", lookup: () => undefined, clock });
  await uas.listen();
  const trunk = dgram.createSocket("udp4");
  await new Promise<void>((ok) => trunk.bind(0, "127.0.0.1", ok));
  const got: SipRequest[] = [];
  trunk.on("message", (m) => {
    const p = parseMessage(new Uint8Array(m));
    if (p.ok && p.message.kind === "request") got.push(p.message);
  });
  const port = trunk.address().port;
  // Closed once however often it is asked, as the worker's RtpMedia is.
  const port0 = await openRtpPort("127.0.0.1");
  let closing: Promise<void> | undefined;
  const rtp = { ...port0, port: port0.port, close: () => (closing ??= port0.close()) };
  const outcome: { failed?: DialFailure; answered?: boolean; rang?: boolean } = {};
  const call = new PlacedCall(uas.placing(), {
    to: "+15550123",
    from: "+15550100",
    trunk: { address: "127.0.0.1", port },
    transport: "UDP",
    trunkHost: `127.0.0.1:${port}`,
    ringTimeoutMs,
    rtp,
  }, {
    ringing: () => (outcome.rang = true),
    answered: () => (outcome.answered = true),
    failed: (f) => (outcome.failed = f),
  });
  call.start();
  const requests = (method: string) => got.filter((r) => r.method === method);
  const until = async (pred: () => boolean, what: string) => {
    for (let i = 0; i < 300 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
    assert(pred(), `${what}; got ${got.map((r) => r.method).join(", ")}`);
  };
  /** The trunk answers `req` with `status`, its To tagged, a Contact, an SDP body if `sdp`. */
  const answer = (req: SipRequest, status: number, reason: string, sdp = "") => {
    const to = header(req, "To")!;
    const lines = [
      `SIP/2.0 ${status} ${reason}`,
      ...["Via", "From", "Call-ID", "CSeq"].map((h) => `${h}: ${header(req, h)}`),
      `To: ${to}${status > 100 && !to.includes("tag=") ? ";tag=trunk" : ""}`,
      `Contact: <sip:trunk@127.0.0.1:${port}>`,
      ...(sdp ? ["Content-Type: application/sdp"] : []),
      `Content-Length: ${sdp.length}`,
      "",
      sdp,
    ];
    trunk.send(new TextEncoder().encode(lines.join("\r\n")), uas.port, "127.0.0.1");
  };
  const close = async () => {
    await uas.close();
    await rtp.close();
    await new Promise<void>((ok) => trunk.close(() => ok()));
  };
  return { clock, requests, until, answer, outcome, close };
}

const SDP = "v=0\r\no=t 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n" +
  "m=audio 4000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n";

Deno.test("an INVITE nothing answers is sent at 0, T1, 3T1, 7T1, no CANCEL without a provisional, and Timer B fails it", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    for (const [ms, n] of [[500, 2], [1000, 3], [2000, 4]]) {
      t.clock.advance(ms);
      await t.until(() => t.requests("INVITE").length === n, `no retransmission ${n}`);
    }
    t.clock.advance(5_000); // the ring timeout passes: a CANCEL must wait for a provisional
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(t.requests("CANCEL").length, 0);
    t.clock.advance(32_000);
    assertEquals(t.outcome.failed, { reason: "dial_failed", status: "failed", sip: "timeout" });
  } finally {
    await t.close();
  }
});

Deno.test("at the ring timeout a ringing INVITE is CANCELled on its branch; the 487 is ACKed and the dial is no_answer", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    const invite = t.requests("INVITE")[0];
    t.answer(invite, 180, "Ringing");
    await t.until(() => t.outcome.rang === true, "180 is not ringing");
    t.clock.advance(5_000);
    await t.until(() => t.requests("CANCEL").length === 1, "no CANCEL at the ring timeout");
    const cancel = t.requests("CANCEL")[0];
    assertEquals(header(cancel, "Via"), header(invite, "Via"));
    assertEquals(header(cancel, "CSeq"), "1 CANCEL");
    assertEquals(cancel.uri, invite.uri);
    t.answer(cancel, 200, "OK");
    t.answer(invite, 487, "Request Terminated");
    await t.until(() => t.requests("ACK").length === 1, "no ACK of the 487");
    assertEquals(header(t.requests("ACK")[0], "Via"), header(invite, "Via"));
    assertEquals(t.outcome.failed?.reason, "no_answer");
    assertEquals(t.outcome.answered, undefined);
  } finally {
    await t.close();
  }
});

Deno.test("a 200 crossing the CANCEL is ACKed and hung up; a 200 retransmission is ACKed again", async () => {
  const t = await placing();
  try {
    await t.until(() => t.requests("INVITE").length === 1, "no INVITE");
    const invite = t.requests("INVITE")[0];
    t.answer(invite, 183, "Session Progress");
    await t.until(() => t.outcome.rang === true, "183 is not ringing");
    t.clock.advance(5_000);
    await t.until(() => t.requests("CANCEL").length === 1, "no CANCEL");
    t.answer(invite, 200, "OK", SDP);
    await t.until(
      () => t.requests("ACK").length === 1 && t.requests("BYE").length === 1,
      "no ACK and BYE",
    );
    const ack = t.requests("ACK")[0];
    // The 2xx's ACK is its own transaction (13.2.2.4), to the 200's Contact, in the dialog.
    assert(
      header(ack, "Via") !== header(invite, "Via"),
      "the 2xx's ACK reused the INVITE's branch",
    );
    assertEquals(
      ack.uri,
      `sip:trunk@127.0.0.1:${header(invite, "To")!.split(":").at(-1)!.replace(">", "")}`,
    );
    assert(header(ack, "To")!.includes("tag=trunk"));
    assertEquals(header(ack, "CSeq"), "1 ACK");
    assertEquals(header(t.requests("BYE")[0], "CSeq"), "2 BYE");
    assertEquals(t.outcome.failed?.reason, "no_answer");
    t.answer(invite, 200, "OK", SDP);
    await t.until(
      () => t.requests("ACK").length === 2,
      "the retransmitted 200 was not ACKed again",
    );
  } finally {
    await t.close();
  }
});
