// The SIP UAS over UDP from a raw socket: the refusals and retransmission rules SIPp's scenarios
// do not reach. Time for the RFC timers is a hand-turned clock; the sockets are real.
import fc from "fast-check";
import { assert, assertEquals } from "./helpers/assert.ts";
import { header } from "../sip/message.ts";
import { OFFER, rawTrunk as setup } from "./helpers/raw_trunk.ts";

Deno.test("a retransmitted INVITE makes one call and is answered with the last provisional", async () => {
  const t = await setup(60_000);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.send("INVITE", { body: OFFER });
    await t.waitFor(3);
    assertEquals(t.received.map((r) => r.status), [100, 180, 180]);
    assertEquals(t.events.filter((e) => e.type === "invited").length, 1);
    assertEquals(t.uas.activeCalls, 1);
  } finally {
    await t.close();
  }
});

Deno.test("the 200 is retransmitted over UDP until the ACK, then the call is confirmed", async () => {
  const t = await setup(0);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0); // the ring ends: 200
    await t.waitFor(3);
    t.clock.advance(500);
    await t.waitFor(4);
    t.clock.advance(1000);
    await t.waitFor(5);
    assertEquals(t.received.map((r) => r.status), [100, 180, 200, 200, 200]);
    const toTag = /tag=([^;]+)/.exec(header(t.received[2], "To")!)![1];
    t.send("ACK", { branch: "z9hG4bK-ack", toTag });
    for (let i = 0; i < 50 && !t.events.some((e) => e.type === "confirmed"); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    t.clock.advance(10_000);
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(t.received.length, 5);
    assertEquals(t.events.map((e) => e.type), ["invited", "answered", "confirmed"]);
  } finally {
    await t.close();
  }
});

Deno.test("a BYE outside any dialog gets 481 and changes nothing", async () => {
  const t = await setup();
  try {
    t.send("BYE", { toTag: "nope", cseq: 2 });
    await t.waitFor(1);
    assertEquals(t.received[0].status, 481);
    assertEquals(t.events, []);
  } finally {
    await t.close();
  }
});

Deno.test("a method the UAS does not serve gets 405 with Allow", async () => {
  const t = await setup();
  try {
    t.send("REGISTER");
    await t.waitFor(1);
    assertEquals([t.received[0].status, header(t.received[0], "Allow")], [
      405,
      "INVITE, ACK, CANCEL, BYE, OPTIONS, NOTIFY, INFO, UPDATE",
    ]);
  } finally {
    await t.close();
  }
});

Deno.test("an extension the caller requires gets 420 naming it, and no call", async () => {
  const t = await setup();
  try {
    // timer (RFC 4028) is one the UAS supports: only 100rel is named.
    t.send("INVITE", { body: OFFER, extra: ["Require: 100rel, timer"] });
    await t.waitFor(2);
    assertEquals([t.received[1].status, header(t.received[1], "Unsupported")], [420, "100rel"]);
    assertEquals(t.uas.activeCalls, 0);
  } finally {
    await t.close();
  }
});

Deno.test("an offer with no phone codec gets 488 with a Warning, and no call", async () => {
  const t = await setup();
  try {
    t.send("INVITE", { body: OFFER.replace("RTP/AVP 0", "RTP/AVP 111") });
    await t.waitFor(2);
    assertEquals(t.received[1].status, 488);
    assert(header(t.received[1], "Warning")?.includes("no audio stream in PCMU or PCMA"));
    assertEquals(t.uas.activeCalls, 0);
  } finally {
    await t.close();
  }
});

Deno.test("a response goes to the source port when the Via asks for rport, with received stamped", async () => {
  const t = await setup();
  try {
    t.send("OPTIONS", { via: "Via: SIP/2.0/UDP 192.0.2.1:9;branch=z9hG4bK-r;rport" });
    await t.waitFor(1);
    assertEquals(
      header(t.received[0], "Via"),
      `SIP/2.0/UDP 192.0.2.1:9;branch=z9hG4bK-r;rport=${t.local};received=127.0.0.1`,
    );
  } finally {
    await t.close();
  }
});

Deno.test("a call event listener that throws neither stops the call nor the UAS", async () => {
  const t = await setup(0, () => {
    throw new Error("listener bug");
  });
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0);
    await t.waitFor(3);
    assertEquals(t.received.map((r) => r.status), [100, 180, 200]);
    t.send("OPTIONS", { branch: "z9hG4bK-2", cseq: 2 });
    await t.waitFor(4);
    assertEquals(t.received[3].status, 200);
  } finally {
    await t.close();
  }
});

Deno.test("a retransmitted BYE after the call ended is answered 200 again, not 481", async () => {
  const t = await setup(0);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0);
    await t.waitFor(3);
    const toTag = /tag=([^;]+)/.exec(header(t.received[2], "To")!)![1];
    t.send("ACK", { branch: "z9hG4bK-ack", toTag });
    t.send("BYE", { branch: "z9hG4bK-bye", toTag, cseq: 2 });
    await t.waitFor(4);
    t.send("BYE", { branch: "z9hG4bK-bye", toTag, cseq: 2 });
    await t.waitFor(5);
    assertEquals(t.received.slice(3).map((r) => [r.status, header(r, "CSeq")]), [
      [200, "2 BYE"],
      [200, "2 BYE"],
    ]);
    assertEquals(t.uas.activeCalls, 0);
    assertEquals(t.events.filter((e) => e.type === "ended").length, 1);
  } finally {
    await t.close();
  }
});

Deno.test("a 200 never ACKed ends the call as no_ack after 64*T1", async () => {
  const t = await setup(0);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0);
    await t.waitFor(3);
    t.clock.advance(64 * 500 - 1);
    assertEquals(t.uas.activeCalls, 1);
    t.clock.advance(1);
    const ended = () => t.events.find((e) => e.type === "ended");
    for (let i = 0; i < 50 && !ended(); i++) await new Promise((r) => setTimeout(r, 10));
    assertEquals(t.uas.activeCalls, 0);
    const end = ended();
    assert(end?.type === "ended" && end.reason === "no_ack", JSON.stringify(t.events));
  } finally {
    await t.close();
  }
});

Deno.test("a re-INVITE putting the call on hold is answered recvonly in the same dialog", async () => {
  const t = await setup(0);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0);
    await t.waitFor(3);
    const toTag = /tag=([^;]+)/.exec(header(t.received[2], "To")!)![1];
    t.send("ACK", { branch: "z9hG4bK-ack", toTag });
    t.send("INVITE", { branch: "z9hG4bK-hold", toTag, cseq: 2, body: OFFER + "a=sendonly\r\n" });
    await t.waitFor(5);
    const ok = t.received[4];
    assertEquals([ok.status, header(ok, "CSeq")], [200, "2 INVITE"]);
    const sdp = new TextDecoder().decode(ok.body);
    assert(sdp.includes("a=recvonly") && sdp.includes("o=- ") && / 2 IN IP4 /.test(sdp), sdp);
  } finally {
    await t.close();
  }
});

Deno.test("a CANCEL after the answer gets 200 and leaves the call up", async () => {
  const t = await setup(0);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0);
    await t.waitFor(3);
    t.send("CANCEL");
    await t.waitFor(4);
    assertEquals(t.received.map((r) => r.status), [100, 180, 200, 200]);
    assertEquals(header(t.received[3], "CSeq"), "1 CANCEL");
    assertEquals(t.uas.activeCalls, 1);
  } finally {
    await t.close();
  }
});

Deno.test("a storm of near-valid INVITEs leaves the UAS answering", async () => {
  const t = await setup(0);
  try {
    const valid = new TextEncoder().encode(
      [
        "INVITE sip:+15550100@127.0.0.1 SIP/2.0",
        `Via: SIP/2.0/UDP 127.0.0.1:${t.local};branch=z9hG4bK-storm`,
        "From: <sip:+15550111@127.0.0.1>;tag=s",
        "To: <sip:+15550100@127.0.0.1>",
        "Call-ID: storm",
        "CSeq: 1 INVITE",
        "Content-Type: application/sdp",
        `Content-Length: ${OFFER.length}`,
        "",
        OFFER,
      ].join("\r\n"),
    );
    const edits = fc.sample(
      fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), {
        minLength: 1,
        maxLength: 4,
      }),
      { numRuns: 300, seed: 27 },
    );
    for (const [i, list] of edits.entries()) {
      const bytes = valid.slice();
      for (const [at, byte] of list) bytes[at] = byte;
      // Each its own branch and Call-ID where the edits left them, so most start a transaction.
      const text = new TextDecoder().decode(bytes).replace("z9hG4bK-storm", `z9hG4bK-${i}`)
        .replace("Call-ID: storm", `Call-ID: storm-${i}`);
      t.uas.receive(new TextEncoder().encode(text), { address: "127.0.0.1", port: t.local });
    }
    await new Promise((r) => setTimeout(r, 300));
    t.send("OPTIONS", { branch: "z9hG4bK-after", cseq: 9 });
    const answered = () =>
      t.received.some((r) => header(r, "CSeq") === "9 OPTIONS" && r.status === 200);
    for (let i = 0; i < 200 && !answered(); i++) await new Promise((r) => setTimeout(r, 10));
    assert(answered(), "OPTIONS after the storm was not answered");
  } finally {
    await t.close();
  }
});

Deno.test("over TCP a message without Content-Length gets 400 and the connection is closed", async () => {
  const t = await setup(0);
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.uas.port });
    const request = [
      `OPTIONS sip:+15550100@127.0.0.1 SIP/2.0`,
      "Via: SIP/2.0/TCP 127.0.0.1:5099;branch=z9hG4bK-tcp",
      "From: <sip:+15550111@127.0.0.1>;tag=t",
      "To: <sip:+15550100@127.0.0.1>",
      "Call-ID: tcp-1",
      "CSeq: 1 OPTIONS",
      "",
      "",
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(request));
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break; // the UAS closed the connection
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
    assert(text.startsWith("SIP/2.0 400 Bad Request (Content-Length is required over TCP)"), text);
    assert(text.includes("Call-ID: tcp-1"));
  } finally {
    await t.close();
  }
});

Deno.test("the CANCEL's 200 and the INVITE's 487 carry the To tag of the ringing", async () => {
  const t = await setup(60_000);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.send("CANCEL");
    await t.waitFor(4);
    assertEquals(t.received.map((r) => r.status), [100, 180, 200, 487]);
    const tags = t.received.slice(1).map((r) => /tag=([^;]+)/.exec(header(r, "To")!)?.[1]);
    assertEquals(new Set(tags).size, 1);
    assertEquals(t.uas.activeCalls, 0);
  } finally {
    await t.close();
  }
});

Deno.test("a BYE while still ringing ends the call: 200 to the BYE, 487 to the INVITE", async () => {
  const t = await setup(60_000);
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    const toTag = /tag=([^;]+)/.exec(header(t.received[1], "To")!)![1];
    t.send("BYE", { branch: "z9hG4bK-early", toTag, cseq: 2 });
    await t.waitFor(4);
    assertEquals(t.received.slice(2).map((r) => [r.status, header(r, "CSeq")]), [
      [200, "2 BYE"],
      [487, "1 INVITE"],
    ]);
    assertEquals(t.uas.activeCalls, 0);
  } finally {
    await t.close();
  }
});

Deno.test("INFO carries DTMF for trunks without RFC 4733: 200 and a dtmf event in the dialog, 481 outside, 415 for other bodies", async () => {
  const t = await setup(0);
  const info = (cseq: number, contentType: string, body: string, toTag = "nope") =>
    t.send("INFO", { cseq, branch: `z9hG4bK-info-${cseq}`, toTag, contentType, body });
  try {
    info(1, "application/dtmf-relay", "Signal=5\r\nDuration=160\r\n");
    await t.waitFor(1);
    assertEquals(t.received[0].status, 481, "no dialog yet");
    t.send("INVITE", { body: OFFER });
    await t.waitFor(3);
    t.clock.advance(0);
    await t.waitFor(4);
    const toTag = /tag=([^;]+)/.exec(header(t.received[3], "To")!)![1];
    t.send("ACK", { branch: "z9hG4bK-ack", toTag });
    info(2, "application/dtmf-relay", "Signal=5\r\nDuration=160\r\n", toTag);
    await t.waitFor(5);
    info(3, "application/dtmf", "#", toTag);
    await t.waitFor(6);
    info(4, "application/dtmf-relay", "Signal=11\r\n", toTag); // RFC 4733 event 11 is #
    await t.waitFor(7);
    info(5, "text/plain", "hello", toTag);
    await t.waitFor(8);
    info(6, "application/dtmf-relay", "Signal=X\r\n", toTag);
    await t.waitFor(9);
    assertEquals(t.received.slice(4).map((r) => r.status), [200, 200, 200, 415, 400]);
    assertEquals(header(t.received[7], "Accept"), "application/dtmf-relay, application/dtmf");
    assertEquals(
      t.events.flatMap((e) => e.type === "dtmf" ? [e.digit] : []),
      [{ digit: "5", durationMs: 160 }, { digit: "#", durationMs: 0 }, {
        digit: "#",
        durationMs: 0,
      }],
    );
    // A retransmitted INFO is absorbed by its transaction: answered again, not a second key.
    info(2, "application/dtmf-relay", "Signal=5\r\nDuration=160\r\n", toTag);
    await t.waitFor(10);
    assertEquals(t.received[9].status, 200);
    assertEquals(t.events.filter((e) => e.type === "dtmf").length, 3);
  } finally {
    await t.close();
  }
});

/** An answered, ACKed call whose INVITE carried `extra`; its To tag and the 200. */
async function answeredCall(t: Awaited<ReturnType<typeof setup>>, extra: string[]) {
  t.send("INVITE", { body: OFFER, extra });
  await t.waitFor(2);
  t.clock.advance(0);
  await t.waitFor(3);
  const ok = t.received[2];
  assertEquals(ok.status, 200);
  const toTag = /tag=([^;]+)/.exec(header(ok, "To")!)![1];
  t.send("ACK", { branch: "z9hG4bK-ack", toTag });
  for (let i = 0; i < 50 && !t.events.some((e) => e.type === "confirmed"); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  return { toTag, ok };
}

Deno.test("session timers (RFC 4028): the 200 names the caller refresher, an UPDATE refreshes, and no refresh ends the call with our BYE", async () => {
  const t = await setup(0);
  try {
    const { toTag, ok } = await answeredCall(t, ["Session-Expires: 1800", "Supported: timer"]);
    assertEquals(header(ok, "Session-Expires"), "1800;refresher=uac");
    assertEquals(header(ok, "Require"), "timer");
    // The BYE is due min(32, 1800/3) = 32 s before the session expires: 1768 s after the 200.
    t.clock.advance(1000_000);
    t.send("UPDATE", { cseq: 2, branch: "z9hG4bK-upd", toTag, extra: ["Session-Expires: 1200"] });
    await t.waitFor(4);
    assertEquals([t.received[3].status, header(t.received[3], "Session-Expires")], [
      200,
      "1200;refresher=uac",
    ]);
    assertEquals(t.received[3].body.length, 0, "an UPDATE without an offer gets no SDP");
    t.clock.advance(1000_000); // past the first interval's end, within the refreshed one's
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(t.requests.filter((r) => r.method === "BYE").length, 0);
    // 1200 - 32 = 1168 s after the refresh: our BYE, and the call ends session_expired.
    t.clock.advance(168_000);
    for (let i = 0; i < 50 && t.requests.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assertEquals(t.requests.map((r) => r.method), ["BYE"]);
    const end = t.events.find((e) => e.type === "ended");
    assert(end?.type === "ended" && end.reason === "session_expired", JSON.stringify(t.events));
  } finally {
    await t.close();
  }
});

Deno.test("session timers: an interval under Min-SE gets 422 with Min-SE 90; a caller that cannot refresh gets no timer", async () => {
  const t = await setup(0);
  try {
    t.send("INVITE", { body: OFFER, extra: ["Session-Expires: 60", "Supported: timer"] });
    await t.waitFor(2);
    assertEquals([t.received[1].status, header(t.received[1], "Min-SE")], [422, "90"]);
    assertEquals(t.uas.activeCalls, 0);
  } finally {
    await t.close();
  }
  const u = await setup(0);
  try {
    // Session-Expires put in by a proxy, the caller without "timer": we would have to refresh,
    // which the UAS does not, so the 200 has no Session-Expires and no timer runs (section 9).
    const { ok } = await answeredCall(u, ["Session-Expires: 90"]);
    assertEquals(header(ok, "Session-Expires"), undefined);
    u.clock.advance(3_600_000);
    await new Promise((r) => setTimeout(r, 50));
    assertEquals(u.requests.length, 0);
    assertEquals(u.events.some((e) => e.type === "ended"), false);
  } finally {
    await u.close();
  }
});

Deno.test("an UPDATE with an offer in a dialog is answered 200 with SDP, as a re-INVITE is", async () => {
  const t = await setup(0);
  try {
    const { toTag } = await answeredCall(t, []);
    t.send("UPDATE", { cseq: 2, branch: "z9hG4bK-upd2", toTag, body: OFFER });
    await t.waitFor(4);
    assertEquals(t.received[3].status, 200);
    assertEquals(header(t.received[3], "Content-Type"), "application/sdp");
    assert(new TextDecoder().decode(t.received[3].body).includes("m=audio"));
    assert(t.events.some((e) => e.type === "media"));
    t.send("UPDATE", { cseq: 1, branch: "z9hG4bK-upd3", toTag: "nope" });
    await t.waitFor(5);
    assertEquals(t.received[4].status, 481);
  } finally {
    await t.close();
  }
});

Deno.test("over TCP a request whose body is over the limit (a valid 1 MB INVITE) gets 413, not 400, and the connection is closed", async () => {
  const t = await setup(0);
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.uas.port });
    const body = OFFER + `a=x-padding:${"p".repeat(1024 * 1024 - OFFER.length - 16)}\r\n`;
    const head = [
      `INVITE sip:+15550100@127.0.0.1 SIP/2.0`,
      "Via: SIP/2.0/TCP 127.0.0.1:5099;branch=z9hG4bK-big",
      "From: <sip:+15550111@127.0.0.1>;tag=t",
      "To: <sip:+15550100@127.0.0.1>",
      "Call-ID: tcp-big",
      "CSeq: 1 INVITE",
      "Max-Forwards: 70",
      "Content-Type: application/sdp",
      `Content-Length: ${body.length}`,
      "",
      "",
    ].join("\r\n");
    // The answer comes once the head is read; the rest may find the connection closed.
    await conn.write(new TextEncoder().encode(head + body.slice(0, 1000)));
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    conn.close();
    assert(text.startsWith("SIP/2.0 413 Request Entity Too Large\r\n"), text);
    assert(text.includes("Call-ID: tcp-big"));
    assertEquals(t.events, []);
  } finally {
    await t.close();
  }
});
