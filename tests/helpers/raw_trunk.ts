// A UAS on 127.0.0.1 with a raw UDP socket as its trunk, on a hand-turned clock: for the RFC 3261
// rules SIPp's scenarios do not reach. `send` writes one request of the call "call-1".
import dgram from "node:dgram";
import { assert } from "./assert.ts";
import { ManualClock } from "./manual_clock.ts";
import { parseMessage, type SipRequest, type SipResponse } from "../../sip/message.ts";
import { type CallEvent, SipUas, type UasOptions } from "../../media/sip/uas.ts";

export const OFFER =
  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

export async function rawTrunk(
  ringingMs = 0,
  listener?: (e: CallEvent) => void,
  more: Partial<UasOptions> = {},
) {
  const clock = new ManualClock();
  const events: CallEvent[] = [];
  const uas = new SipUas({
    host: "127.0.0.1",
    lookup: (n) => n === "+15550100" ? { agentId: "a1" } : undefined,
    ringingMs,
    clock,
    onEvent: (e) => {
      events.push(e);
      listener?.(e);
    },
    ...more,
  });
  const port = await uas.listen();
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
  const received: SipResponse[] = [];
  const requests: SipRequest[] = [];
  socket.on("message", (m) => {
    const r = parseMessage(new Uint8Array(m));
    if (r.ok && r.message.kind === "response") received.push(r.message);
    if (r.ok && r.message.kind === "request") requests.push(r.message);
  });
  const local = socket.address().port;
  const send = (
    method: string,
    opts: {
      cseq?: number;
      branch?: string;
      toTag?: string;
      fromTag?: string;
      extra?: string[];
      body?: string;
      contentType?: string;
      via?: string;
    } = {},
  ) => {
    const body = opts.body ?? "";
    const text = [
      `${method} sip:+15550100@127.0.0.1:${port} SIP/2.0`,
      opts.via ?? `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=${opts.branch ?? "z9hG4bK-1"}`,
      `From: <sip:+15550111@127.0.0.1>;tag=${opts.fromTag ?? "caller"}`,
      `To: <sip:+15550100@127.0.0.1>${opts.toTag ? `;tag=${opts.toTag}` : ""}`,
      "Call-ID: call-1",
      `CSeq: ${opts.cseq ?? 1} ${method}`,
      ...(body ? [`Content-Type: ${opts.contentType ?? "application/sdp"}`] : []),
      ...(opts.extra ?? []),
      `Content-Length: ${body.length}`,
      "",
      body,
    ].join("\r\n");
    socket.send(new TextEncoder().encode(text), port, "127.0.0.1");
  };
  const waitFor = async (n: number) => {
    for (let i = 0; i < 200 && received.length < n; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert(received.length >= n, `expected ${n} responses, got ${received.map((r) => r.status)}`);
  };
  const close = async () => {
    await uas.close();
    await new Promise<void>((ok) => socket.close(() => ok()));
  };
  return { clock, events, uas, send, received, requests, waitFor, close, local };
}
