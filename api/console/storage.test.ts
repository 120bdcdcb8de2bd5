// The console's storage page: a bucket set from the form, the secret shown only as set, a refusal
// shown on the page with nothing written, and a recording still waiting shown with its error.
import assert from "node:assert/strict";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { signIn } from "../../tests/helpers/console_client.ts";
import { seedSession } from "../../tests/helpers/sample_session.ts";
import { newSealingKeyText } from "../../common/sealed.ts";
import { addUpload, markFailed } from "../../db/agent_storage.ts";

const SECRET = "console bucket secret";

Deno.test("console storage page: set, refused, and what waits for the bucket", async () => {
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() });
  const op = await signIn(api);
  try {
    const t = await makeTenant(api);
    const path = `/console/storage/${t.agent_id}`;
    const refused = await op.post(path, { bucket: "calls", retention_days: "30" });
    assert.equal(refused.status, 400);
    assert.match(refused.html, /needs access_key_id and secret_access_key/);
    assert.equal((await api.db.sql`select 1 from agent_storage`).length, 0);
    const saved = await op.post(path, {
      bucket: "calls",
      region: "auto",
      endpoint: "https://acct.r2.cloudflarestorage.com",
      access_key_id: "AKID",
      secret_access_key: SECRET,
      retention_days: "30",
    });
    assert.equal(saved.status, 303);
    const s = await seedSession(api.db.sql, { agent_id: t.agent_id, workspace_id: t.workspace_id });
    await addUpload(api.db.sql, {
      session_id: s.session_id,
      agent_id: t.agent_id,
      local_path: "/r/x.wav",
    });
    await markFailed(api.db.sql, s.session_id, "the bucket answered 403: AccessDenied", 10);
    const page = await op.get(path);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes(SECRET));
    assert.match(page.html, /Secret access key<\/dt><dd>set/);
    assert.match(page.html, /30 days/);
    assert.match(page.html, new RegExp(`${s.session_id}[\\s\\S]*403: AccessDenied`));
  } finally {
    await api.close();
  }
});
