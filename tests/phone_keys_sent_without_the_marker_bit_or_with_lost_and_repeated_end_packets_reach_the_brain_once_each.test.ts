// RFC 4733 keys as carriers send them on a real SIP call (SIPp signalling, a UDP phone for RTP):
// no marker bit on any event's first packet (livekit/sip #585 lost such keys), end packets sent
// six times, all end packets lost with audio after, and all lost with the next key straight
// after. Each press reaches the brain once, and the record has one phone/dtmf row per press.
import { assertEquals } from "./helpers/assert.ts";
import { assertSippPassed } from "./helpers/sipp.ts";
import { keypadCall, until } from "./helpers/keypad_call.ts";
import type { LogEntry } from "./helpers/call_harness.ts";

Deno.test({
  name:
    "keys sent without the marker bit and with lost or repeated end packets reach the brain once each",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const call = await keypadCall({ greeting: "Please enter your booking number." });
    try {
      const { caller, seen } = call;
      const noMarker = { marker: false };
      await caller.press("1", 101, 100, noMarker);
      await caller.press("2", 101, 100, { ...noMarker, ends: 6 });
      await caller.press("3", 101, 100, { ...noMarker, ends: 0 });
      await caller.say(new Uint8Array(160 * 10).fill(0xff)); // 200 ms of the line's silence
      await caller.press("4", 101, 100, { ...noMarker, ends: 0 });
      await caller.press("5", 101, 100, noMarker); // straight after: 4's ends never came
      await caller.say(new Uint8Array(160 * 5).fill(0xff));
      await caller.press("#", 101, 100, noMarker);
      assertSippPassed(await call.sipp);
      await until("the #", () => seen.digits.includes("#"));
      assertEquals(seen.digits.join(""), "12345#");
      const record = await call.service.record(call.sessionId, "ended", 20_000);
      const rows = (source: string) =>
        record.log.filter((e: LogEntry) => e.source === source && e.kind === "dtmf")
          .map((e: LogEntry) => e.data.digit).join("");
      assertEquals(rows("phone"), "12345#");
      assertEquals(rows("to_brain"), "12345#");
      const line = record.log.find((e: LogEntry) => e.source === "phone" && e.kind === "line").data;
      // 2's three extra ends were dropped as repeats; 3 and 4 ended without an end packet.
      assertEquals([line.dtmfDigits, line.dtmfEndLost], [6, 2]);
      console.log(JSON.stringify({ redundant: line.dtmfRedundant, end_lost: line.dtmfEndLost }));
    } finally {
      await call.close();
    }
  },
});
