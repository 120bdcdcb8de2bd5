// A worker's SIP service (startSipPhones, the real UAS and admission) on a test API's database,
// with no engines, and a raw UDP trunk that sends one INVITE by hand and collects the answers:
// for tests of what the worker does with a request SIPp cannot be made to send as it is.
import dgram from "node:dgram";
import type { TestApi } from "./api_server.ts";
import { TokenVerifier } from "../../common/token.ts";
import { signingJwk } from "../../db/signing_key.ts";
import { type SipSettings, startSipPhones } from "../../media/sip/phone_service.ts";
import type { CallEngines } from "../../media/engines/call_engines.ts";
import { header, parseMessage, type SipResponse } from "../../sip/message.ts";

const OFFER =
  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

export interface RawTrunk {
  /** The worker node's calls (empty while none is admitted). */
  calls: Map<string, unknown>;
  /** Every response the worker sent the trunk, in order. */
  answers: SipResponse[];
  /** When each answer arrived (performance.now()), by its index in `answers`. */
  answeredAt: number[];
  /** Sends an INVITE for +15550100 with `token` in its Request-URI, a PCMU offer, `callId`. */
  invite(token: string, callId: string): void;
  /** The first final (2xx-6xx) answer, waiting up to `ms` (3 s). */
  final(ms?: number): Promise<SipResponse | undefined>;
}

/**
 * Runs `fn` with a worker's SIP service and a raw trunk on `api`'s database; closes both. With
 * `engines` the node speaks (its calls greet); `settings` go to startSipPhones.
 */
export async function withRawTrunk(
  api: TestApi,
  fn: (trunk: RawTrunk) => Promise<void>,
  options: { engines?: CallEngines; settings?: Partial<SipSettings> } = {},
) {
  const node = {
    sql: api.db.sql,
    nodeId: "node-test-1",
    verifier: await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings)),
    calls: new Map(),
    engines: options.engines,
  };
  const uas = await startSipPhones(node, { host: "127.0.0.1", port: 0, ...options.settings });
  const socket = dgram.createSocket("udp4");
  const answers: SipResponse[] = [];
  const answeredAt: number[] = [];
  /** The INVITE's own lines that its ACK repeats (section 17.1.1.3). */
  let sent: { uri: string; via: string; callId: string } | undefined;
  socket.on("message", (m) => {
    const p = parseMessage(new Uint8Array(m));
    if (p.ok && p.message.kind === "response") {
      answers.push(p.message);
      answeredAt.push(performance.now());
      // A non-2xx final answer (and each retransmission of it) is ACKed in its transaction, as
      // a real trunk does: unACKed, the worker retransmits it for 32 s (Timer H), past the test.
      if (p.message.status >= 300 && sent) {
        const ack = [
          `ACK ${sent.uri} SIP/2.0`,
          sent.via,
          "From: <sip:+15550111@127.0.0.1>;tag=caller",
          `To: ${header(p.message, "To")}`,
          `Call-ID: ${sent.callId}`,
          "CSeq: 1 ACK",
          "Max-Forwards: 70",
          "Content-Length: 0",
          "",
          "",
        ].join("\r\n");
        socket.send(new TextEncoder().encode(ack), uas.port, "127.0.0.1");
      }
    }
  });
  try {
    await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
    const local = socket.address().port;
    await fn({
      calls: node.calls,
      answers,
      answeredAt,
      invite(token, callId) {
        sent = {
          uri: `sip:+15550100@127.0.0.1:${uas.port};session=${token}`,
          via: `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-${crypto.randomUUID()}`,
          callId,
        };
        const invite = [
          `INVITE ${sent.uri} SIP/2.0`,
          sent.via,
          "From: <sip:+15550111@127.0.0.1>;tag=caller",
          "To: <sip:+15550100@127.0.0.1>",
          `Call-ID: ${callId}`,
          "CSeq: 1 INVITE",
          "Max-Forwards: 70",
          `Contact: <sip:caller@127.0.0.1:${local}>`,
          "Content-Type: application/sdp",
          `Content-Length: ${OFFER.length}`,
          "",
          OFFER,
        ].join("\r\n");
        socket.send(new TextEncoder().encode(invite), uas.port, "127.0.0.1");
      },
      async final(ms = 3_000) {
        for (let i = 0; i < ms / 10 && !answers.some((a) => a.status >= 200); i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
        return answers.find((a) => a.status >= 200);
      },
    });
  } finally {
    await new Promise<void>((ok) => socket.close(() => ok()));
    await uas.close();
  }
}
