// RTP_PORTS: a phone call's RTP port is a free even port of the operator's range, a port held by
// anything else is skipped, and a full range is a clear error, not a port outside it.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { bindUdp } from "../../sip/udp.ts";
import { RtpMedia } from "./rtp_media.ts";

async function freeEvenPair(): Promise<number> {
  for (;;) {
    const probe = await bindUdp("127.0.0.1", 0, () => {});
    const port = probe.port - (probe.port % 2);
    await probe.close();
    if (port >= 1024 && port + 2 <= 65535) return port;
  }
}

Deno.test("phone calls take even RTP ports from RTP_PORTS, skip one held elsewhere, and say when the range is full", async () => {
  const first = await freeEvenPair();
  const ports = { first, last: first + 5 }; // even ports: first, first+2, first+4
  const held = await bindUdp("127.0.0.1", first + 2, () => {});
  const opened: RtpMedia[] = [];
  try {
    opened.push(await RtpMedia.open({ host: "127.0.0.1", ports }));
    opened.push(await RtpMedia.open({ host: "127.0.0.1", ports }));
    const got = opened.map((m) => m.port).sort();
    assertEquals(got, [first, first + 4]);
    let refused: Error | undefined;
    try {
      opened.push(await RtpMedia.open({ host: "127.0.0.1", ports }));
    } catch (err) {
      refused = err as Error;
    }
    assert(refused, "a third call got a port though the range was full");
    assertEquals(refused.message, `no free RTP port in RTP_PORTS ${first}-${first + 5}`);
  } finally {
    for (const m of opened) await m.close();
    await held.close();
  }
});
