// A caller's Call-ID with a NUL in it (RFC 3261 forbids it; the parser keeps it as sent) must not
// erase the call's events: PostgreSQL's jsonb refuses U+0000, which set aside sip/invite and
// worker/call_started (and to_brain/session_start). They are stored with the NUL written `\u0000`.
// A real UAS with the worker's admission (startSipPhones) on the test database, a raw UDP trunk.
import dgram from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import type { LogEntry } from "./helpers/call_harness.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";
import { startSipPhones } from "../media/sip/phone_service.ts";
import { parseMessage, type SipResponse } from "../media/sip/message.ts";

const OFFER =
  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";
const CALL_ID = "nul\u0000in-the-call-id@trunk";

Deno.test("a NUL in the caller's Call-ID is stored escaped and the call's events stay in its record", async () => {
  const api = await startTestApi();
  const socket = dgram.createSocket("udp4");
  const node = {
    sql: api.db.sql,
    nodeId: "node-test-1",
    verifier: await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings)),
    calls: new Map(),
  };
  const uas = await startSipPhones(node, { host: "127.0.0.1", port: 0 });
  try {
    const tenant = await makeTenant(api);
    const connect = await api.post(
      "/api/v1/sessions.connect",
      { agent_id: tenant.agent_id },
      tenant.sk,
    );
    assertEquals(connect.status, 200);
    const token = connect.body.webrtc_request_params.headers.Authorization.slice(7);
    const sessionId = connect.body.session_id;
    const answers: SipResponse[] = [];
    socket.on("message", (m) => {
      const p = parseMessage(new Uint8Array(m));
      if (p.ok && p.message.kind === "response") answers.push(p.message);
    });
    await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
    const local = socket.address().port;
    const invite = [
      `INVITE sip:+15550100@127.0.0.1:${uas.port};session=${token} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-nul`,
      "From: <sip:+15550111@127.0.0.1>;tag=caller",
      "To: <sip:+15550100@127.0.0.1>",
      `Call-ID: ${CALL_ID}`,
      "CSeq: 1 INVITE",
      "Max-Forwards: 70",
      `Contact: <sip:caller@127.0.0.1:${local}>`,
      "Content-Type: application/sdp",
      `Content-Length: ${OFFER.length}`,
      "",
      OFFER,
    ].join("\r\n");
    socket.send(new TextEncoder().encode(invite), uas.port, "127.0.0.1");
    // No engines on this node: the answered call fails at once (engine_unavailable) and ends.
    // deno-lint-ignore no-explicit-any
    let record: any;
    for (let i = 0; i < 200; i++) {
      record = (await api.admin("/api/v1/sessions.get", { session_id: sessionId })).body;
      if (record.status === "failed" || record.status === "ended") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert(answers.some((a) => a.status === 200), `answers: ${answers.map((a) => a.status)}`);
    assertEquals(record.end_reason, "engine_unavailable");
    const escaped = "nul\\u0000in-the-call-id@trunk";
    const find = (source: string, kind: string) =>
      record.log.find((e: LogEntry) => e.source === source && e.kind === kind);
    assertEquals(find("sip", "invite")?.data.call_id, escaped);
    assertEquals(find("worker", "call_started")?.data.call_id, escaped);
    assertEquals(find("sip", "answered")?.data.codec, "PCMU");
  } finally {
    await new Promise<void>((ok) => socket.close(() => ok()));
    await uas.close();
    await api.close();
  }
});
