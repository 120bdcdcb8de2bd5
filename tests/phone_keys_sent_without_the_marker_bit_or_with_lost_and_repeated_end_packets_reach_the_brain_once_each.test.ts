// RFC 4733 keys as carriers send them on a real SIP call, SIPp 3.6 doing the signalling and the
// RTP: its play_pcap_audio sends a capture made here (tests/helpers/rtp_pcap.ts) as written. No
// marker bit on any event's first packet (livekit/sip #585 lost such keys), end packets sent six
// times, all end packets lost with audio after, and all lost with the next key straight after.
// Each press reaches the brain once, and the record has one phone/dtmf row per press.
import { assert, assertEquals } from "./helpers/assert.ts";
import { assertSippPassed } from "./helpers/sipp.ts";
import { keypadCall, until } from "./helpers/keypad_call.ts";
import { PcapCaller, rtpPcap } from "./helpers/rtp_pcap.ts";
import type { LogEntry } from "./helpers/call_harness.ts";

Deno.test({
  name:
    "keys sent without the marker bit and with lost or repeated end packets reach the brain once each",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const noMarker = { marker: false };
    const phone = new PcapCaller()
      .silence(1500) // the greeting starts
      .press("1", 100, noMarker).silence(200)
      .press("2", 100, { ...noMarker, ends: 6 }).silence(200)
      .press("3", 100, { ...noMarker, ends: 0 }).silence(300) // ends lost, audio after
      .press("4", 100, { ...noMarker, ends: 0 }) // ends lost, 5 straight after
      .press("5", 100, noMarker).silence(200)
      .press("#", 100, noMarker).silence(2000);
    const call = await keypadCall({
      greeting: "Please enter your booking number.",
      pcap: rtpPcap(phone.packets),
    });
    try {
      const { seen } = call;
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
      // 3 and 4 ended without an end packet; the repeats of the others' ends were dropped.
      assertEquals([line.dtmfDigits, line.dtmfEndLost], [6, 2]);
      // (#'s own repeats may come after the call ended on it.)
      assert(line.dtmfRedundant >= 2 + 5 + 2, JSON.stringify(line));
    } finally {
      await call.close();
    }
  },
});
