// The INVITE client transaction (RFC 3261 17.1.1) on a hand-turned clock: Timer A's doubling
// retransmissions until a provisional, Timer B's give-up, the ACK of a non-2xx answer (sent again
// for its retransmission, never handed up twice), and 2xx retransmissions handed to the caller.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { ManualClock } from "../tests/helpers/manual_clock.ts";
import { header, parseMessage, type SipRequest, type SipResponse } from "./message.ts";
import { responseTo } from "./response.ts";
import { cancelOf, InviteClientTransaction } from "./invite_client.ts";

const INVITE = parseMessage(new TextEncoder().encode([
  "INVITE sip:+15550123@trunk.example SIP/2.0",
  "Via: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKabc;rport",
  "From: <sip:+15550100@127.0.0.1>;tag=ours",
  "To: <sip:+15550123@trunk.example>",
  "Call-ID: c1@127.0.0.1",
  "CSeq: 2 INVITE",
  "Route: <sip:proxy.example;lr>",
  "Content-Length: 0",
  "",
  "",
].join("\r\n"))) as { ok: true; message: SipRequest };

function transaction() {
  const clock = new ManualClock();
  const sent: string[] = [];
  const got: SipResponse[] = [];
  let timedOut = false, ended = false;
  const tx = new InviteClientTransaction({
    clock,
    reliable: false,
    request: INVITE.message,
    send: (b) => sent.push(new TextDecoder().decode(b).split("\r\n")[0]),
    onResponse: (r) => got.push(r),
    onTimeout: () => (timedOut = true),
    onEnd: () => (ended = true),
  });
  return { clock, sent, got, tx, timedOut: () => timedOut, ended: () => ended };
}

const answer = (status: number) => responseTo(INVITE.message, status, { toTag: "theirs" });

Deno.test("Timer A doubles from T1 until a provisional; Timer B gives up at 64·T1", () => {
  const t = transaction();
  for (const ms of [500, 1000, 2000, 4000, 8000]) t.clock.advance(ms);
  assertEquals(t.sent.length, 6); // at 0, 0.5, 1.5, 3.5, 7.5, 15.5 s
  t.clock.advance(32_000 - 15_500);
  assert(t.timedOut() && t.ended(), "Timer B did not fire at 32 s");
});

Deno.test("a provisional stops Timer A and Timer B; a 486 is ACKed, its retransmission ACKed again", () => {
  const t = transaction();
  t.tx.receive(answer(180));
  t.clock.advance(60_000);
  assertEquals([t.sent.length, t.timedOut()], [1, false]);
  t.tx.receive(answer(486));
  t.tx.receive(answer(486));
  assertEquals(t.sent, [
    "INVITE sip:+15550123@trunk.example SIP/2.0",
    "ACK sip:+15550123@trunk.example SIP/2.0",
    "ACK sip:+15550123@trunk.example SIP/2.0",
  ]);
  assertEquals(t.got.map((r) => r.status), [180, 486]); // the retransmission is not handed up
  t.clock.advance(32_000); // Timer D
  assert(t.ended());
});

Deno.test("a 2xx and its retransmissions go to the caller, who ACKs them; the ACK of a non-2xx is in the INVITE's transaction", () => {
  const t = transaction();
  t.tx.receive(answer(200));
  t.tx.receive(answer(200));
  assertEquals(t.got.map((r) => r.status), [200, 200]);
  assertEquals(t.sent.length, 1); // the transaction sends no ACK for a 2xx (13.2.2.4)
  t.clock.advance(32_000); // Timer M
  assert(t.ended());
  const cancel = cancelOf(INVITE.message);
  assertEquals(header(cancel, "CSeq"), "2 CANCEL");
  assertEquals(header(cancel, "Via"), header(INVITE.message, "Via"));
  assertEquals(header(cancel, "Route"), "<sip:proxy.example;lr>");
});
