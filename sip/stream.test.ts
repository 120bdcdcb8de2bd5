import { assertEquals } from "../tests/helpers/assert.ts";
import { type Framed, SipStreamFramer } from "./stream.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const text = (f: Framed[]) =>
  f.map((x) =>
    x.kind === "message"
      ? new TextDecoder().decode(x.bytes)
      : x.kind === "ping"
      ? "ping"
      : `broken: ${x.reason}`
  );
const msg = (cseq: number, body = "") =>
  `OPTIONS sip:x@h SIP/2.0\r\nCSeq: ${cseq} OPTIONS\r\nl: ${body.length}\r\n\r\n${body}`;

Deno.test("a TCP stream is cut into messages by Content-Length, across and within chunks", () => {
  const framer = new SipStreamFramer();
  const wire = msg(1, "v=0\r\n") + msg(2) + msg(3, "abc");
  const out: Framed[] = [];
  for (let i = 0; i < wire.length; i += 7) out.push(...framer.push(enc(wire.slice(i, i + 7))));
  assertEquals(text(out), [msg(1, "v=0\r\n"), msg(2), msg(3, "abc")]);
  assertEquals(text(new SipStreamFramer().push(enc(wire))), [
    msg(1, "v=0\r\n"),
    msg(2),
    msg(3, "abc"),
  ]);
});

Deno.test("a CRLFCRLF keep-alive on a TCP stream is a ping, not a message", () => {
  assertEquals(text(new SipStreamFramer().push(enc("\r\n\r\n" + msg(1)))), ["ping", msg(1)]);
});

Deno.test("a TCP message without Content-Length breaks the stream and nothing after it is read", () => {
  const framer = new SipStreamFramer();
  const out = framer.push(enc("OPTIONS sip:x@h SIP/2.0\r\nCSeq: 1 OPTIONS\r\n\r\n" + msg(2)));
  assertEquals(text(out), ["broken: Content-Length is required over TCP"]);
  assertEquals(framer.push(enc(msg(3))), []);
});

Deno.test("a TCP head that never ends breaks the stream instead of growing without bound", () => {
  const out = new SipStreamFramer().push(
    enc("OPTIONS sip:x@h SIP/2.0\r\nX: " + "a".repeat(20_000)),
  );
  assertEquals(text(out), ["broken: headers too large"]);
});
