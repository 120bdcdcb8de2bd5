// Regression: SipUas.close() ended its dialogs and sockets but left each server transaction's
// timers running, so a closed worker kept resending an unacknowledged final answer (Timer G, up
// to 32 s) into a closed socket, where the send threw an uncaught error. Run on the real clock, so
// Deno's op sanitizer also fails this test if any timer is still pending after close().
import dgram from "node:dgram";
import { assert } from "../../tests/helpers/assert.ts";
import { parseMessage } from "../../sip/message.ts";
import { SipUas } from "./uas.ts";

Deno.test("a closed UAS stops resending its unacknowledged answers", async () => {
  const uas = new SipUas({ host: "127.0.0.1", lookup: () => undefined });
  const port = await uas.listen();
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
  const local = socket.address().port;
  const answers: number[] = [];
  let first: () => void = () => {};
  const answered = new Promise<void>((ok) => first = ok);
  socket.on("message", (m) => {
    const r = parseMessage(new Uint8Array(m));
    if (r.ok && r.message.kind === "response" && r.message.status >= 300) {
      answers.push(r.message.status);
      first();
    }
  });
  // An INVITE with no SDP offer: refused 488, and the trunk never ACKs it (Timer G resends it).
  const invite = [
    `INVITE sip:+15550199@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-closed-uas`,
    "Max-Forwards: 70",
    `From: <sip:trunk@127.0.0.1:${local}>;tag=t1`,
    `To: <sip:+15550199@127.0.0.1:${port}>`,
    "Call-ID: closed-uas-1",
    "CSeq: 1 INVITE",
    `Contact: <sip:trunk@127.0.0.1:${local}>`,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  socket.send(invite, port, "127.0.0.1");
  try {
    await answered;
    assert(answers.length >= 1, "the INVITE was answered");
  } finally {
    await uas.close();
    await new Promise<void>((ok) => socket.close(() => ok()));
  }
  const after = answers.length;
  await new Promise((r) => setTimeout(r, 700)); // past Timer G's first resend (T1 = 500 ms)
  assert(answers.length === after, `the closed UAS resent its answer ${answers.length - after}x`);
});
