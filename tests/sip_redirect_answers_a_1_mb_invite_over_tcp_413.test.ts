// A valid INVITE whose body is over the SIP framer's limit (64 KiB) sent to the redirect server
// over TCP is answered 413 Request Entity Too Large (RFC 3261 section 21.4.11), as the worker's
// UAS answers it, not 400 about its Content-Length; the connection then closes and nothing is
// written.
import { assert, assertEquals } from "./helpers/assert.ts";
import { rowCounts } from "./helpers/api_server.ts";
import { redirectOverUdp as setup } from "./helpers/redirect_over_udp.ts";

const OFFER =
  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

Deno.test("the redirect answers a 1 MB INVITE over TCP 413, not 400, and writes nothing", async () => {
  const t = await setup();
  try {
    const before = await rowCounts(t.api.db);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.sip.port });
    const body = OFFER + `a=x-padding:${"p".repeat(1024 * 1024 - OFFER.length - 16)}\r\n`;
    const head = [
      `INVITE sip:+15550100@127.0.0.1:${t.sip.port} SIP/2.0`,
      "Via: SIP/2.0/TCP 127.0.0.1:5060;branch=z9hG4bK-big",
      "From: <sip:+15550111@127.0.0.1>;tag=t",
      "To: <sip:+15550100@127.0.0.1>",
      "Call-ID: redirect-tcp-big",
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
    assert(text.includes("Call-ID: redirect-tcp-big"), text);
    assertEquals(await rowCounts(t.api.db), before);
  } finally {
    await t.close();
  }
});
