// The worker speaking first in a call's dialog, seen from a raw UDP socket playing the trunk: its
// BYE (retransmitted on Timer E until answered, given up at Timer F), a BYE after a 200 that was
// never ACKed (Timer L), and REFER with the NOTIFYs that report the transfer (RFC 3515). Time for
// the RFC timers is a hand-turned clock; the sockets are real.
import dgram from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { ManualClock } from "./helpers/manual_clock.ts";
import { header, parseMessage, type SipMessage, type SipRequest } from "../sip/message.ts";
import { type CallEvent, SipUas } from "../media/sip/uas.ts";

const OFFER =
  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

async function trunk() {
  const clock = new ManualClock();
  const events: CallEvent[] = [];
  const uas = new SipUas({
    host: "127.0.0.1",
    lookup: () => ({ agentId: "a1" }),
    clock,
    onEvent: (e) => events.push(e),
  });
  const port = await uas.listen();
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
  const got: SipMessage[] = [];
  socket.on("message", (m) => {
    const r = parseMessage(new Uint8Array(m));
    if (r.ok) got.push(r.message);
  });
  const local = socket.address().port;
  const sendText = (lines: string[], body = "") =>
    socket.send(
      new TextEncoder().encode([...lines, `Content-Length: ${body.length}`, "", body].join("\r\n")),
      port,
      "127.0.0.1",
    );
  const dialog = (method: string, cseq: number, toTag = "", extra: string[] = []) => [
    `${method} sip:+15550100@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-${method}-${cseq}`,
    "From: <sip:+15550111@127.0.0.1>;tag=caller",
    `To: <sip:+15550100@127.0.0.1>${toTag ? `;tag=${toTag}` : ""}`,
    "Call-ID: call-1",
    `CSeq: ${cseq} ${method}`,
    `Contact: <sip:caller@127.0.0.1:${local}>`,
    ...extra,
  ];
  /** A response from the trunk to a request the worker sent. */
  const answer = (req: SipRequest, status: number, reason: string) =>
    sendText([
      `SIP/2.0 ${status} ${reason}`,
      ...["Via", "From", "To", "Call-ID", "CSeq"].map((h) => `${h}: ${header(req, h)}`),
    ]);
  const until = async (pred: () => boolean, what: string) => {
    for (let i = 0; i < 300 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
    assert(pred(), `${what}; got ${got.map(describe).join(", ")}`);
  };
  const requests = (method: string) =>
    got.filter((m): m is SipRequest => m.kind === "request" && m.method === method);
  /** INVITE, 200, ACK: a confirmed call; returns our tag. */
  const invite = async () => {
    sendText([...dialog("INVITE", 1), "Content-Type: application/sdp"], OFFER);
    await until(() => got.some((m) => m.kind === "response" && m.status === 180), "no 180");
    clock.advance(0); // the ringing time (0 here) runs out
  };
  const call = async () => {
    await invite();
    await until(() => got.some((m) => m.kind === "response" && m.status === 200), "no 200");
    const ok = got.find((m) => m.kind === "response" && m.status === 200)!;
    const tag = /tag=([^;>\s]+)/.exec(header(ok, "To")!)![1];
    sendText(dialog("ACK", 1, tag));
    await until(() => events.some((e) => e.type === "confirmed"), "not confirmed");
    return tag;
  };
  const close = async () => {
    await uas.close();
    await new Promise<void>((ok) => socket.close(() => ok()));
  };
  return {
    invite,
    local,
    clock,
    events,
    uas,
    got,
    until,
    requests,
    answer,
    sendText,
    dialog,
    call,
    close,
  };
}

function describe(m: SipMessage): string {
  return m.kind === "request" ? m.method : String(m.status);
}

Deno.test("the worker's BYE is retransmitted at T1, 2T1, 4T1 over UDP until the 200", async () => {
  const t = await trunk();
  try {
    const tag = await t.call();
    const outcome = t.uas.hangUp("call-1");
    await t.until(() => t.requests("BYE").length === 1, "no BYE");
    const bye = t.requests("BYE")[0];
    // In the dialog: our tag in From, the caller's in To, sent to the caller's Contact.
    assert(header(bye, "From")!.includes(`tag=${tag}`));
    assert(header(bye, "To")!.includes("tag=caller"));
    assertEquals(bye.uri, `sip:caller@127.0.0.1:${t.local}`);
    assertEquals(header(bye, "CSeq")!.split(" ")[1], "BYE");
    t.clock.advance(500);
    await t.until(() => t.requests("BYE").length === 2, "no retransmission at T1");
    t.clock.advance(1000);
    await t.until(() => t.requests("BYE").length === 3, "no retransmission at 2T1");
    t.answer(bye, 200, "OK");
    const o = await outcome;
    assert(o?.kind === "response" && o.response.status === 200, JSON.stringify(o));
    t.clock.advance(4000);
    await new Promise((r) => setTimeout(r, 30));
    assertEquals(t.requests("BYE").length, 3);
    const ended = t.events.find((e) => e.type === "ended");
    assert(ended?.type === "ended" && ended.reason === "hung_up_here");
    assertEquals(t.uas.activeCalls, 0);
  } finally {
    await t.close();
  }
});

Deno.test("a BYE nobody answers is given up at Timer F (64*T1)", async () => {
  const t = await trunk();
  try {
    await t.call();
    const outcome = t.uas.hangUp("call-1");
    await t.until(() => t.requests("BYE").length === 1, "no BYE");
    t.clock.advance(64 * 500);
    assertEquals((await outcome)?.kind, "timeout");
    // T1 doubling to T2 (4 s): 0.5, 1, 2, 4, 4, 4... s, eleven sends by 32 s.
    await t.until(() => t.requests("BYE").length === 11, "not 11 BYEs");
  } finally {
    await t.close();
  }
});

Deno.test("a 200 never ACKed ends the call with a BYE from the worker", async () => {
  const t = await trunk();
  try {
    await t.invite();
    await t.until(() => t.got.some((m) => m.kind === "response" && m.status === 200), "no 200");
    t.clock.advance(64 * 500);
    await t.until(() => t.requests("BYE").length === 1, "no BYE at Timer L");
    const ended = t.events.find((e) => e.type === "ended");
    assert(ended?.type === "ended" && ended.reason === "no_ack");
  } finally {
    await t.close();
  }
});

Deno.test("REFER accepted with 202 and a NOTIFY of 200 is a transfer done", async () => {
  const t = await trunk();
  try {
    const tag = await t.call();
    const result = t.uas.transfer("call-1", "tel:+14155550199");
    await t.until(() => t.requests("REFER").length === 1, "no REFER");
    const refer = t.requests("REFER")[0];
    assertEquals(header(refer, "Refer-To"), "<tel:+14155550199>");
    t.answer(refer, 202, "Accepted");
    // A provisional sipfrag is progress only; the final one settles the transfer.
    const notify = (cseq: number, frag: string) =>
      t.sendText([
        ...t.dialog("NOTIFY", cseq, tag, [
          "Event: refer",
          "Subscription-State: active",
          "Content-Type: message/sipfrag",
        ]),
      ], frag);
    notify(2, "SIP/2.0 100 Trying\r\n");
    notify(3, "SIP/2.0 200 OK\r\n");
    assertEquals(await result, { ok: true, detail: "the transfer target answered 200 OK" });
    await t.until(
      () =>
        t.got.filter((m) => m.kind === "response" && header(m, "CSeq")?.endsWith("NOTIFY"))
          .length === 2,
      "NOTIFYs not answered",
    );
  } finally {
    await t.close();
  }
});

Deno.test("a REFER refused, or a NOTIFY reporting failure, is a transfer that did not happen", async () => {
  const t = await trunk();
  try {
    const tag = await t.call();
    const refused = t.uas.transfer("call-1", "sip:desk@pbx.example.com");
    await t.until(() => t.requests("REFER").length === 1, "no REFER");
    t.answer(t.requests("REFER")[0], 403, "Forbidden");
    assertEquals(await refused, { ok: false, detail: "REFER answered 403 Forbidden" });

    const failed = t.uas.transfer("call-1", "tel:+14155550199");
    await t.until(() => t.requests("REFER").length === 2, "no second REFER");
    t.answer(t.requests("REFER")[1], 202, "Accepted");
    t.sendText([
      ...t.dialog("NOTIFY", 2, tag, ["Event: refer", "Content-Type: message/sipfrag"]),
    ], "SIP/2.0 486 Busy Here\r\n");
    assertEquals(await failed, { ok: false, detail: "the transfer target answered 486 Busy Here" });
    // The call is still up.
    assertEquals(t.uas.activeCalls, 1);
  } finally {
    await t.close();
  }
});

Deno.test("a REFER accepted but never reported on is given up after 32 s", async () => {
  const t = await trunk();
  try {
    await t.call();
    const result = t.uas.transfer("call-1", "tel:+14155550199");
    await t.until(() => t.requests("REFER").length === 1, "no REFER");
    t.answer(t.requests("REFER")[0], 202, "Accepted");
    await new Promise((r) => setTimeout(r, 50));
    t.clock.advance(32_000);
    assertEquals(await result, { ok: false, detail: "No final NOTIFY for the REFER." });
    assertEquals(t.uas.activeCalls, 1);
  } finally {
    await t.close();
  }
});
