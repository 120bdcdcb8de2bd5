// A session token minted for a Twilio media stream (its session's metadata names the carrier) is
// refused when it is presented at the worker's SIP port, as the stream route refuses a SIP
// session's token (wrong_carrier): 403 naming why, the session still `created`, nothing written.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi } from "./helpers/api_server.ts";
import { withRawTrunk } from "./helpers/raw_sip_trunk.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import {
  postTwilioVoiceWebhook,
  readTwimlStream,
  twilioCall,
} from "./fakes/twilio_media_stream.ts";

const ACCOUNT = "AC0123456789abcdef0123456789abcdef";

Deno.test("a Twilio stream's session token dialled at the worker's SIP port gets 403 and writes nothing", async () => {
  const telephony = loadTelephonySettings({ TWILIO_ACCOUNT_SID: ACCOUNT, TWILIO_AUTH_TOKEN: "tw" });
  const api = await startTestApi({}, { telephony });
  try {
    await withRawTrunk(api, async (trunk) => {
      const { agent_id } = await makeTenant(api);
      const r = await postTwilioVoiceWebhook(
        `${api.url}/api/v1/telephony/twilio/${agent_id}`,
        "tw",
        twilioCall(ACCOUNT),
      );
      const { url, params } = readTwimlStream(r.body);
      const sessionId = new URL(url).pathname.split("/").pop()!;
      const before = await rowCounts(api.db);

      trunk.invite(params.session_token, "twilio-token-at-sip");
      const final = await trunk.final();
      assert(final, `no final answer: ${trunk.answers.map((a) => a.status)}`);
      assertEquals([final.status, final.reason], [
        403,
        "Forbidden (This session was not opened for a SIP call)",
      ]);
      assertEquals(await rowCounts(api.db), before);
      const record = await api.admin("/api/v1/sessions.get", { session_id: sessionId });
      assertEquals(record.body.status, "created");
      assertEquals(trunk.calls.size, 0);
    });
  } finally {
    await api.close();
  }
});
