import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { header, headerList, parseMessage, serialize, type SipMessage } from "./message.ts";
import { dialledUser, parseVia, tagOf } from "./headers.ts";

const bytes = (lines: string[], body = "") =>
  new TextEncoder().encode(lines.join("\r\n") + "\r\n\r\n" + body);
const BASE = [
  "Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK-a",
  "From: <sip:+15550111@192.0.2.1>;tag=1",
  "To: <sip:+15550100@192.0.2.9>",
  "Call-ID: c1@192.0.2.1",
];

function parsed(lines: string[], body = ""): SipMessage {
  const r = parseMessage(bytes(lines, body));
  if (!r.ok) throw new Error(r.reason);
  return r.message;
}
function refused(lines: string[], body = ""): string {
  const r = parseMessage(bytes(lines, body));
  assert(!r.ok, "expected a refusal");
  return r.reason;
}

Deno.test("compact header names read as their long forms", () => {
  const m = parsed([
    "INVITE sip:+15550100@192.0.2.9 SIP/2.0",
    "v: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK-a",
    "f: <sip:a@192.0.2.1>;tag=1",
    "t: <sip:+15550100@192.0.2.9>",
    "i: c1",
    "CSeq: 1 INVITE",
    "m: <sip:a@192.0.2.1>",
    "c: application/sdp",
    "l: 4",
  ], "v=0\r\nextra");
  for (const name of ["Via", "From", "To", "Call-ID", "Contact", "Content-Type"]) {
    assert(header(m, name), name);
  }
  assertEquals(new TextDecoder().decode(m.body), "v=0\r"); // Content-Length cuts a UDP datagram
});

Deno.test("folded header lines are joined and header names are case-insensitive", () => {
  const m = parsed([
    "OPTIONS sip:x@h SIP/2.0",
    ...BASE,
    "cseq: 7\r\n   OPTIONS",
    "SUBJECT: a\r\n\tb",
  ]);
  assertEquals(header(m, "CSeq"), "7 OPTIONS");
  assertEquals(header(m, "Subject"), "a b");
});

Deno.test("several Via headers, on lines or comma-separated, keep their order", () => {
  const m = parsed([
    "OPTIONS sip:x@h SIP/2.0",
    "Via: SIP/2.0/UDP p1.example;branch=z9hG4bK-1, SIP/2.0/TCP p2.example:5070;branch=z9hG4bK-2",
    ...BASE,
    "CSeq: 1 OPTIONS",
  ]);
  const vias = headerList(m, "Via").map(parseVia);
  assertEquals(vias.map((v) => [v?.transport, v?.host, v?.port, v?.params.get("branch")]), [
    ["UDP", "p1.example", undefined, "z9hG4bK-1"],
    ["TCP", "p2.example", 5070, "z9hG4bK-2"],
    ["UDP", "192.0.2.1", 5060, "z9hG4bK-a"],
  ]);
});

Deno.test("a response parses with its status and reason", () => {
  const m = parsed(["SIP/2.0 180 Ringing", ...BASE, "CSeq: 1 INVITE"]);
  assert(m.kind === "response" && m.status === 180 && m.reason === "Ringing");
});

Deno.test("serializing then parsing gives the message back, with a Content-Length", () => {
  const m = parsed(
    ["INVITE sip:+15550100@192.0.2.9 SIP/2.0", ...BASE, "CSeq: 1 INVITE", "l: 5"],
    "v=0\r\n",
  );
  const wire = serialize(m);
  const text = new TextDecoder().decode(wire);
  assert(text.includes("Content-Length: 5\r\n\r\nv=0\r\n"), text);
  const again = parseMessage(wire);
  assert(again.ok);
  assertEquals(again.message, m);
});

Deno.test("malformed requests are refused with the fault named", () => {
  const line = "OPTIONS sip:x@h SIP/2.0";
  assertEquals(refused([line, ...BASE]), "missing CSeq header");
  assertEquals(refused([line, ...BASE.slice(1), "CSeq: 1 OPTIONS"]), "missing Via header");
  assertEquals(
    refused([line, ...BASE, "CSeq: 1 INVITE"]),
    "CSeq method does not match the request method",
  );
  assertEquals(refused([line, ...BASE, "CSeq: one OPTIONS"]), "CSeq is not a number and a method");
  assertEquals(
    refused([line, ...BASE, "CSeq: 1 OPTIONS", "Max-Forwards: x"]),
    "Max-Forwards is not a number",
  );
  assertEquals(
    refused([line, ...BASE, "CSeq: 1 OPTIONS", "Content-Length: 9"]),
    "Content-Length is longer than the body",
  );
  assertEquals(
    refused([line, ...BASE, "CSeq: 1 OPTIONS", "Content-Length: 0", "l: 3"], "abc"),
    "conflicting Content-Length headers",
  );
  assertEquals(
    refused([line, ...BASE, "CSeq: 1 OPTIONS", "Call-ID: other"]),
    "more than one Call-ID",
  );
  assertEquals(
    refused([line, ...BASE, "CSeq: 1 OPTIONS", "no colon here"]),
    'header line without a name: "no colon here"',
  );
  assert(
    refused(["OPTIONS sip:x@h SIP/3.0", ...BASE, "CSeq: 1 OPTIONS"]).startsWith(
      "unsupported version",
    ),
  );
  assert(refused(["OPTIONS  sip:x@h SIP/2.0", ...BASE]).startsWith("request line is not"));
  assertEquals(parseMessage(new TextEncoder().encode(line + "\r\nVia: x")), {
    ok: false,
    reason: "no blank line after the headers",
  });
});

Deno.test("a refused request keeps what it read, so the 400 can be addressed", () => {
  const r = parseMessage(bytes(["OPTIONS sip:x@h SIP/2.0", ...BASE, "CSeq: 1 INVITE"]));
  assert(!r.ok && r.partial?.kind === "request");
  assertEquals(header(r.partial, "Call-ID"), "c1@192.0.2.1");
});

Deno.test("over TCP a message without Content-Length is refused", () => {
  const r = parseMessage(bytes(["OPTIONS sip:x@h SIP/2.0", ...BASE, "CSeq: 1 OPTIONS"]), true);
  assertEquals(r.ok ? "" : r.reason, "Content-Length is required over TCP");
});

Deno.test("leading CRLF keep-alives before a message are skipped", () => {
  const body = bytes(["OPTIONS sip:x@h SIP/2.0", ...BASE, "CSeq: 1 OPTIONS"]);
  const r = parseMessage(new Uint8Array([13, 10, 13, 10, ...body]));
  assert(r.ok);
});

Deno.test("the dialled number is the URI's user part without visual separators", () => {
  assertEquals(dialledUser("sip:+91-80-1234.5678@trunk.example;user=phone"), "+918012345678");
  assertEquals(dialledUser("tel:+1-555-0100"), "+15550100");
  assertEquals(dialledUser("sip:%2B15550100@h"), "+15550100");
  assertEquals(dialledUser("sip:reception@h"), "reception");
  assertEquals(dialledUser("sip:h"), undefined);
  assertEquals(tagOf('"A, B" <sip:a@h>;tag=xyz'), "xyz");
});
