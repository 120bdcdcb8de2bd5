// A phone dialling a worker's SIP port by hand (one UDP socket for SIP, a PhoneCaller for RTP),
// noting when each answer arrives on its own clock: INVITE sent, 180, 200, and the first RTP
// packet loud enough to be the bot's voice. SIPp's message log has the SIP times too, but not the
// RTP's; one process keeping both on one clock makes the steps add up.
import dgram from "node:dgram";
import { header, parseMessage, type SipResponse } from "../../sip/message.ts";
import { PhoneCaller } from "../../tests/helpers/phone_caller.ts";
import { g711Decode } from "../../media/phone/g711.ts";
import { rms } from "../../caller/wav.ts";
import { BOT_LEVEL } from "../../caller/turn_latency.ts";

export interface DialTimes {
  invite: number;
  ringing?: number;
  ok?: number;
  /** The first packet louder than BOT_LEVEL: the greeting reaching the caller. */
  firstAudio?: number;
  final?: number;
}

/** Dials `+15550100` at the worker with `token`, ACKs the 200, waits for the greeting, hangs up. */
export async function dialForGreeting(
  sipPort: number,
  token: string,
  timeoutMs = 20_000,
): Promise<DialTimes> {
  const phone = await PhoneCaller.open();
  const socket = dgram.createSocket("udp4");
  const answers: { at: number; r: SipResponse }[] = [];
  socket.on("message", (m) => {
    const p = parseMessage(new Uint8Array(m));
    if (p.ok && p.message.kind === "response") {
      answers.push({ at: performance.now(), r: p.message });
    }
  });
  await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
  const local = socket.address().port;
  const callId = crypto.randomUUID();
  const sdp = `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n` +
    `m=audio ${phone.port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\n` +
    `a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=sendrecv\r\n`;
  const head = (method: string, uri: string, cseq: number, toTag?: string) => [
    `${method} ${uri} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-${crypto.randomUUID()}`,
    "From: <sip:+15550111@127.0.0.1>;tag=bench",
    `To: <sip:+15550100@127.0.0.1>${toTag ? `;tag=${toTag}` : ""}`,
    `Call-ID: ${callId}`,
    `CSeq: ${cseq} ${method}`,
    "Max-Forwards: 70",
    `Contact: <sip:bench@127.0.0.1:${local}>`,
  ];
  const send = (lines: string[], body = "") => {
    const text = [
      ...lines,
      ...(body ? ["Content-Type: application/sdp"] : []),
      `Content-Length: ${new TextEncoder().encode(body).length}`,
      "",
      body,
    ].join("\r\n");
    socket.send(new TextEncoder().encode(text), sipPort, "127.0.0.1");
  };
  const uri = `sip:+15550100@127.0.0.1:${sipPort};session=${token}`;
  const times: DialTimes = { invite: performance.now() };
  send(head("INVITE", uri, 1), sdp);
  const until = times.invite + timeoutMs;
  try {
    let ok: { at: number; r: SipResponse } | undefined;
    while (performance.now() < until) {
      ok = answers.find((a) => a.r.status >= 200);
      if (ok) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    times.ringing = answers.find((a) => a.r.status === 180)?.at;
    if (!ok) return times;
    times.final = ok.at;
    if (ok.r.status !== 200) throw new Error(`the worker answered ${ok.r.status} ${ok.r.reason}`);
    times.ok = ok.at;
    const toTag = /tag=([^;>\s]+)/.exec(header(ok.r, "To") ?? "")?.[1];
    send(head("ACK", uri, 1, toTag));
    await phone.start(timeoutMs);
    while (performance.now() < until && times.firstAudio === undefined) {
      times.firstAudio = phone.heard.find((h) =>
        h.payloadType === 0 && rms(g711Decode("PCMU", h.payload)) > BOT_LEVEL
      )?.at;
      await new Promise((r) => setTimeout(r, 5));
    }
    send(head("BYE", uri, 2, toTag));
    await new Promise((r) => setTimeout(r, 100));
    return times;
  } finally {
    await phone.close();
    await new Promise<void>((done) => socket.close(() => done()));
  }
}
