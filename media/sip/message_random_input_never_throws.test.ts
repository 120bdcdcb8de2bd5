// Whatever arrives on the SIP port, the parser answers with a message or a named refusal: it never
// throws, so one hostile datagram cannot take the worker's SIP side down.
import fc from "fast-check";
import { assert } from "../../tests/helpers/assert.ts";
import { parseMessage } from "../../sip/message.ts";
import { answerOffer } from "./sdp.ts";
import { SipStreamFramer } from "../../sip/stream.ts";
import { dialledUser, parseNameAddr, parseVia } from "../../sip/headers.ts";

const VALID = [
  "INVITE sip:+15550100@192.0.2.9 SIP/2.0",
  "Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK-a;rport",
  'From: "A, B" <sip:+15550111@192.0.2.1>;tag=1',
  "To: <sip:+15550100@192.0.2.9>",
  "Call-ID: c1@192.0.2.1",
  "CSeq: 1 INVITE",
  "Content-Type: application/sdp",
  "Content-Length: 40",
  "",
  "v=0\r\nc=IN IP4 192.0.2.1\r\nm=audio 4000 RTP/AVP 0\r\n",
].join("\r\n");

/** A valid INVITE with a few bytes replaced, inserted or cut: near-misses reach deeper code. */
const mutated = fc.tuple(
  fc.array(
    fc.tuple(
      fc.nat(VALID.length),
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom("set", "insert", "cut"),
    ),
    {
      maxLength: 6,
    },
  ),
).map(([edits]) => {
  let bytes = Array.from(new TextEncoder().encode(VALID));
  for (const [at, byte, op] of edits) {
    if (op === "set") bytes[at % bytes.length] = byte;
    else if (op === "insert") bytes.splice(at, 0, byte);
    else bytes = bytes.slice(0, at);
  }
  return new Uint8Array(bytes);
});

Deno.test("random and near-valid datagrams parse or are refused with a reason, never throw", () => {
  fc.assert(
    fc.property(fc.oneof(fc.uint8Array({ maxLength: 600 }), mutated), (bytes) => {
      for (const stream of [false, true]) {
        const r = parseMessage(bytes, stream);
        assert(r.ok || r.reason.length > 0);
        if (!r.ok) continue;
        for (const h of r.message.headers) {
          parseVia(h.value);
          parseNameAddr(h.value);
        }
        if (r.message.kind === "request") dialledUser(r.message.uri);
        answerOffer(new TextDecoder().decode(r.message.body), {
          address: "127.0.0.1",
          port: 4000,
          sessionId: "1",
          version: 1,
        });
      }
      new SipStreamFramer().push(bytes);
    }),
    { numRuns: 3000 },
  );
});
