// RFC 3261 section 12.2.2: a dialog is its Call-ID and both tags. A BYE (or INFO, re-INVITE) that
// has the Call-ID and our To tag but not the caller's From tag is not a request of the call: 481,
// the call stays up, and the operator's log says who tried. The real caller's BYE still ends it.
import { assertEquals } from "./helpers/assert.ts";
import { header } from "../sip/message.ts";
import { RefusalLog } from "../media/sip/refusal_log.ts";
import { OFFER, rawTrunk } from "./helpers/raw_trunk.ts";

function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = {
    info: () => {},
    warn: (_m: string, f: Record<string, unknown> = {}) => void lines.push(f),
    error: () => {},
  };
  return { lines, refusals: new RefusalLog(log) };
}

Deno.test("a BYE with the dialog's Call-ID and To tag but another From tag gets 481 and the call stays up", async () => {
  const { lines, refusals } = recordingLog();
  const t = await rawTrunk(0, undefined, { refusals });
  try {
    t.send("INVITE", { body: OFFER });
    await t.waitFor(2);
    t.clock.advance(0);
    await t.waitFor(3);
    const toTag = /tag=([^;]+)/.exec(header(t.received[2], "To")!)![1];
    t.send("ACK", { branch: "z9hG4bK-ack", toTag });
    t.send("BYE", { branch: "z9hG4bK-forged", toTag, fromTag: "attacker", cseq: 2 });
    await t.waitFor(4);
    assertEquals(t.received[3].status, 481);
    t.send("INFO", {
      branch: "z9hG4bK-forged-info",
      toTag,
      fromTag: "attacker",
      cseq: 3,
      body: "Signal=5\r\nDuration=160\r\n",
      contentType: "application/dtmf-relay",
    });
    await t.waitFor(5);
    assertEquals(t.received[4].status, 481);
    assertEquals(t.uas.activeCalls, 1);
    assertEquals(t.events.map((e) => e.type), ["invited", "answered", "confirmed"]);
    assertEquals(lines.map((l) => [l.method, l.status, l.reason, l.source]), [
      ["BYE", 481, "From tag is not the dialog's", "127.0.0.1"],
      ["INFO", 481, "From tag is not the dialog's", "127.0.0.1"],
    ]);

    t.send("BYE", { branch: "z9hG4bK-real", toTag, cseq: 4 });
    await t.waitFor(6);
    assertEquals(t.received[5].status, 200);
    assertEquals(t.uas.activeCalls, 0);
    assertEquals(t.events.at(-1), { type: "ended", callId: "call-1", reason: "caller_hung_up" });
  } finally {
    await t.close();
  }
});

Deno.test("refused INVITEs are logged with source, port and reason, one line per source and reason per window", async () => {
  const { lines, refusals } = recordingLog();
  const t = await rawTrunk(0, undefined, { refusals, lookup: () => undefined });
  try {
    for (let i = 0; i < 5; i++) {
      t.send("INVITE", { branch: `z9hG4bK-${i}`, body: OFFER });
      await t.waitFor(2 * (i + 1));
    }
    assertEquals(t.received.filter((r) => r.status === 404).length, 5);
    assertEquals(lines.length, 1);
    assertEquals(lines[0].method, "INVITE");
    assertEquals(lines[0].status, 404);
    assertEquals(lines[0].reason, "Not Found (no agent for this number)");
    assertEquals([lines[0].source, lines[0].port], ["127.0.0.1", t.local]);
    assertEquals(refusals.suppressed, 4);
  } finally {
    await t.close();
  }
});
