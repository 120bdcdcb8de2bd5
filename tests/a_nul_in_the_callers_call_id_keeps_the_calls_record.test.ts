// A caller's Call-ID with a NUL in it (RFC 3261 forbids it; the parser keeps it as sent) must not
// erase the call's events: PostgreSQL's jsonb refuses U+0000, which set aside sip/invite and
// worker/call_started (and to_brain/session_start). They are stored with the NUL written `\u0000`.
// A real UAS with the worker's admission (startSipPhones) on the test database, a raw UDP trunk.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import type { LogEntry } from "./helpers/call_harness.ts";
import { withRawTrunk } from "./helpers/raw_sip_trunk.ts";

const CALL_ID = "nul\u0000in-the-call-id@trunk";

Deno.test("a NUL in the caller's Call-ID is stored escaped and the call's events stay in its record", async () => {
  const api = await startTestApi();
  try {
    await withRawTrunk(api, async (trunk) => {
      const tenant = await makeTenant(api);
      const connect = await api.post(
        "/api/v1/sessions.connect",
        { agent_id: tenant.agent_id },
        tenant.sk,
      );
      assertEquals(connect.status, 200);
      const token = connect.body.webrtc_request_params.headers.Authorization.slice(7);
      const sessionId = connect.body.session_id;
      trunk.invite(token, CALL_ID);
      // No engines on this node: the call, started while it rings, fails at once
      // (engine_unavailable) and its INVITE is refused 480 (media/sip/ringing_call.ts).
      // deno-lint-ignore no-explicit-any
      let record: any;
      for (let i = 0; i < 200; i++) {
        record = (await api.admin("/api/v1/sessions.get", { session_id: sessionId })).body;
        if (record.status === "failed" || record.status === "ended") break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const answers = trunk.answers;
      assert(answers.some((a) => a.status === 480), `answers: ${answers.map((a) => a.status)}`);
      assertEquals(record.end_reason, "engine_unavailable");
      const escaped = "nul\\u0000in-the-call-id@trunk";
      const find = (source: string, kind: string) =>
        record.log.find((e: LogEntry) => e.source === source && e.kind === kind);
      assertEquals(find("sip", "invite")?.data.call_id, escaped);
      assertEquals(find("worker", "call_started")?.data.call_id, escaped);
    });
  } finally {
    await api.close();
  }
});
