import { assertEquals } from "../tests/helpers/assert.ts";
import { ManualClock } from "../tests/helpers/manual_clock.ts";
import { parseMessage, type SipRequest } from "./message.ts";
import { responseTo } from "./response.ts";
import {
  type EndReason,
  InviteServerTransaction,
  NonInviteServerTransaction,
} from "./transaction.ts";

function request(method: string): SipRequest {
  const text = [
    `${method} sip:+15550100@127.0.0.1 SIP/2.0`,
    "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-1",
    "From: <sip:a@127.0.0.1>;tag=1",
    "To: <sip:+15550100@127.0.0.1>",
    "Call-ID: c1",
    `CSeq: 1 ${method}`,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  const parsed = parseMessage(new TextEncoder().encode(text));
  if (!parsed.ok || parsed.message.kind !== "request") throw new Error("bad fixture");
  return parsed.message;
}

function setup<T>(
  make: (r: SipRequest, o: ConstructorParameters<typeof InviteServerTransaction>[1]) => T,
  method: string,
  reliable = false,
) {
  const clock = new ManualClock();
  const sentAt: number[] = [];
  const ended: EndReason[] = [];
  const req = request(method);
  const tx = make(req, {
    clock,
    reliable,
    send: () => void sentAt.push(clock.now),
    onEnd: (r) => void ended.push(r),
  });
  return { clock, sentAt, ended, req, tx };
}
const invite = (reliable = false) =>
  setup((r, o) => new InviteServerTransaction(r, o), "INVITE", reliable);
const nonInvite = (reliable = false) =>
  setup((r, o) => new NonInviteServerTransaction(r, o), "BYE", reliable);

Deno.test("a 200 to an INVITE is retransmitted at T1 doubling to T2 until its ACK", () => {
  const { clock, sentAt, ended, req, tx } = invite();
  tx.respond(responseTo(req, 200, { toTag: "x" }));
  clock.advance(8000);
  // 0, then +500, +1000, +2000, +4000 (capped at T2): at 500, 1500, 3500, 7500.
  assertEquals(sentAt, [0, 500, 1500, 3500, 7500]);
  tx.acknowledged();
  clock.advance(60_000);
  assertEquals(sentAt.length, 5);
  assertEquals(ended, ["done"]);
});

Deno.test("a 200 never acknowledged ends the INVITE transaction as no_ack after 64*T1", () => {
  const { clock, ended, req, tx } = invite();
  tx.respond(responseTo(req, 200, { toTag: "x" }));
  clock.advance(31_999);
  assertEquals(ended, []);
  clock.advance(1);
  assertEquals(ended, ["no_ack"]);
  assertEquals(tx.state, "terminated");
});

Deno.test("a 4xx to an INVITE is retransmitted per Timer G and stops at its ACK, ending after T4", () => {
  const { clock, sentAt, ended, req, tx } = invite();
  tx.respond(responseTo(req, 486, { toTag: "x" }));
  clock.advance(1600);
  assertEquals(sentAt, [0, 500, 1500]);
  tx.receive(request("ACK"));
  assertEquals(tx.state, "confirmed");
  clock.advance(4999);
  assertEquals([sentAt.length, ended], [3, []]);
  clock.advance(1);
  assertEquals(ended, ["done"]);
});

Deno.test("a 4xx never acknowledged ends the INVITE transaction at Timer H", () => {
  const { clock, ended, req, tx } = invite();
  tx.respond(responseTo(req, 404, { toTag: "x" }));
  clock.advance(64 * 500);
  assertEquals(ended, ["no_ack"]);
});

Deno.test("over TCP a 4xx is not retransmitted and the ACK ends the transaction at once", () => {
  const { clock, sentAt, ended, req, tx } = invite(true);
  tx.respond(responseTo(req, 404, { toTag: "x" }));
  clock.advance(10_000);
  assertEquals(sentAt, [0]);
  tx.receive(request("ACK"));
  assertEquals(ended, ["done"]);
});

Deno.test("a retransmitted INVITE is answered with the last provisional response", () => {
  const { clock, sentAt, req, tx } = invite();
  tx.respond(responseTo(req, 100));
  tx.respond(responseTo(req, 180, { toTag: "x" }));
  clock.advance(700);
  tx.receive(req);
  assertEquals(sentAt, [0, 0, 700]);
});

Deno.test("a non-INVITE answers retransmissions from memory until Timer J, then ends", () => {
  const { clock, sentAt, ended, req, tx } = nonInvite();
  tx.receive(req); // before the final response: absorbed
  tx.respond(responseTo(req, 200));
  clock.advance(1000);
  tx.receive(req);
  assertEquals(sentAt, [0, 1000]);
  clock.advance(64 * 500 - 1001);
  assertEquals(ended, []);
  clock.advance(1);
  assertEquals([ended, tx.state], [["done"], "terminated"]);
});

Deno.test("over TCP a non-INVITE transaction ends with its final response (Timer J is zero)", () => {
  const { ended, req, tx } = nonInvite(true);
  tx.respond(responseTo(req, 200));
  assertEquals(ended, ["done"]);
});

Deno.test("a stopped transaction sends nothing more and does not report an end", () => {
  for (const make of [invite, nonInvite]) {
    const { clock, sentAt, ended, req, tx } = make();
    tx.respond(responseTo(req, 486, { toTag: "x" }));
    clock.advance(600);
    const before = sentAt.length;
    tx.stop();
    clock.advance(120_000);
    assertEquals(sentAt.length, before);
    assertEquals(ended, []);
    assertEquals(tx.state, "terminated");
  }
});
