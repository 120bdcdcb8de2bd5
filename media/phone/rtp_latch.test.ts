import { assertEquals } from "../../tests/helpers/assert.ts";
import { PROBATION, RELATCH_QUIET_MS, RtpLatch } from "./rtp_latch.ts";

const trunk = { address: "192.0.2.10", port: 4000 };
const nat = { address: "192.0.2.10", port: 31_000 };
const stranger = { address: "203.0.113.66", port: 5000 };

function latch(symmetric = false) {
  const counts = { latches: 0, foreign: 0 };
  const l = new RtpLatch(symmetric, counts);
  l.reset([trunk.address, "198.51.100.1"], -10_000);
  return { l, counts };
}

Deno.test("a named address latches on its first packet; a stranger is never heard without RTP_SYMMETRIC", () => {
  const { l, counts } = latch();
  for (let seq = 0; seq < 50; seq++) assertEquals(l.accept(stranger, 7, seq, seq * 20), false);
  assertEquals(l.source, undefined);
  assertEquals(l.accept(nat, 1, 100, 1000), true);
  assertEquals(l.source, nat);
  assertEquals(counts, { latches: 1, foreign: 50 });
});

Deno.test("another source on a named address takes over only after probation and once the latched one is quiet", () => {
  const { l } = latch();
  l.accept(trunk, 1, 10, 0);
  // A second port of the trunk's address, in sequence, while the trunk still sends: refused.
  for (let i = 0; i < 10; i++) {
    assertEquals(l.accept(trunk, 1, 11 + i, 20 * (i + 1)), true);
    assertEquals(l.accept(nat, 2, 500 + i, 20 * (i + 1)), false);
  }
  assertEquals(l.source, trunk);
  // The trunk falls quiet: PROBATION sequenced packets of the new port take over.
  const quiet = 200 + RELATCH_QUIET_MS;
  for (let i = 0; i < PROBATION - 1; i++) assertEquals(l.accept(nat, 2, 600 + i, quiet), false);
  assertEquals(l.accept(nat, 2, 600 + PROBATION - 1, quiet), true);
  assertEquals(l.source, nat);
});

Deno.test("with RTP_SYMMETRIC any address is heard, after PROBATION packets in sequence with one SSRC", () => {
  const { l, counts } = latch(true);
  // A blind spray: packets out of sequence never pass probation.
  for (let i = 0; i < 40; i++) assertEquals(l.accept(stranger, 7, (i * 7919) & 0xffff, i), false);
  const natted = { address: "100.64.0.9", port: 7078 };
  for (let i = 0; i < PROBATION - 1; i++) {
    assertEquals(l.accept(natted, 3, (65534 + i) & 0xffff, 100), false);
  }
  assertEquals(l.accept(natted, 3, (65534 + PROBATION - 1) & 0xffff, 120), true);
  assertEquals(l.source, natted);
  // A stranger in sequence cannot displace a live source.
  for (let i = 0; i < 20; i++) {
    l.accept(natted, 3, i + 10, 140 + 20 * i);
    assertEquals(l.accept(stranger, 8, 100 + i, 140 + 20 * i), false);
  }
  assertEquals([l.source, counts.latches], [natted, 1]);
});

Deno.test("a new SSRC or a gap in the sequence starts probation again", () => {
  const { l } = latch(true);
  const peer = { address: "100.64.0.9", port: 7078 };
  assertEquals(l.accept(peer, 1, 1, 0), false);
  assertEquals(l.accept(peer, 1, 2, 0), false);
  assertEquals(l.accept(peer, 2, 3, 0), false); // another SSRC
  assertEquals(l.accept(peer, 2, 5, 0), false); // a gap
  assertEquals(l.accept(peer, 2, 6, 0), false);
  assertEquals(l.accept(peer, 2, 7, 0), false);
  assertEquals(l.accept(peer, 2, 8, 0), true);
});

Deno.test("with RTP_SYMMETRIC a stranger in sequence is not heard before the stream has been quiet, and a named address takes the call back", () => {
  const counts = { latches: 0, foreign: 0 };
  const l = new RtpLatch(true, counts);
  l.reset([trunk.address], 0);
  for (let i = 0; i < 20; i++) assertEquals(l.accept(stranger, 9, i, 20 * i), false);
  assertEquals(l.source, undefined);
  // Nothing from a named address for RELATCH_QUIET_MS: the stranger (a NATed trunk?) is heard...
  assertEquals(l.accept(stranger, 9, 20, RELATCH_QUIET_MS), true);
  // ...until the named address sends: it latches at once.
  assertEquals(l.accept(trunk, 1, 1, RELATCH_QUIET_MS + 20), true);
  assertEquals(l.source, trunk);
  assertEquals(l.accept(stranger, 9, 21, RELATCH_QUIET_MS + 40), false);
});
