// A session token minted for a Twilio media stream (its session's metadata names the carrier) is
// refused when it is presented at the worker's SIP port, as the stream route refuses a SIP
// session's token (wrong_carrier): 403 naming why, the session still `created`, nothing written.
import dgram from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi } from "./helpers/api_server.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";
import { startSipPhones } from "../media/sip/phone_service.ts";
import { parseMessage, type SipResponse } from "../media/sip/message.ts";
import {
  postTwilioVoiceWebhook,
  readTwimlStream,
  twilioCall,
} from "./fakes/twilio_media_stream.ts";

const ACCOUNT = "AC0123456789abcdef0123456789abcdef";
const OFFER =
  "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

Deno.test("a Twilio stream's session token dialled at the worker's SIP port gets 403 and writes nothing", async () => {
  const telephony = loadTelephonySettings({ TWILIO_ACCOUNT_SID: ACCOUNT, TWILIO_AUTH_TOKEN: "tw" });
  const api = await startTestApi({}, { telephony });
  const socket = dgram.createSocket("udp4");
  const node = {
    sql: api.db.sql,
    nodeId: "node-test-1",
    verifier: await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings)),
    calls: new Map(),
  };
  const uas = await startSipPhones(node, { host: "127.0.0.1", port: 0 });
  try {
    const { agent_id } = await makeTenant(api);
    const r = await postTwilioVoiceWebhook(
      `${api.url}/api/v1/telephony/twilio/${agent_id}`,
      "tw",
      twilioCall(ACCOUNT),
    );
    const { url, params } = readTwimlStream(r.body);
    const sessionId = new URL(url).pathname.split("/").pop()!;
    const before = await rowCounts(api.db);

    const answers: SipResponse[] = [];
    socket.on("message", (m) => {
      const p = parseMessage(new Uint8Array(m));
      if (p.ok && p.message.kind === "response") answers.push(p.message);
    });
    await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
    const local = socket.address().port;
    const invite = [
      `INVITE sip:+15550100@127.0.0.1:${uas.port};session=${params.session_token} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bK-twilio-token`,
      "From: <sip:+15550111@127.0.0.1>;tag=caller",
      "To: <sip:+15550100@127.0.0.1>",
      "Call-ID: twilio-token-at-sip",
      "CSeq: 1 INVITE",
      "Max-Forwards: 70",
      `Contact: <sip:caller@127.0.0.1:${local}>`,
      "Content-Type: application/sdp",
      `Content-Length: ${OFFER.length}`,
      "",
      OFFER,
    ].join("\r\n");
    socket.send(new TextEncoder().encode(invite), uas.port, "127.0.0.1");
    for (let i = 0; i < 300 && !answers.some((a) => a.status >= 200); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const final = answers.find((a) => a.status >= 200);
    assert(final, `no final answer: ${answers.map((a) => a.status)}`);
    assertEquals([final.status, final.reason], [
      403,
      "Forbidden (This session was not opened for a SIP call)",
    ]);
    assertEquals(await rowCounts(api.db), before);
    const record = await api.admin("/api/v1/sessions.get", { session_id: sessionId });
    assertEquals(record.body.status, "created");
    assertEquals(node.calls.size, 0);
  } finally {
    await new Promise<void>((ok) => socket.close(() => ok()));
    await uas.close();
    await api.close();
  }
});
