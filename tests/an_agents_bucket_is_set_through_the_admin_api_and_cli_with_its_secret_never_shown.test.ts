// Issue 37: an agent's bucket and retention through the admin API and `deno task admin storage`:
// the secret access key is sealed (the row holds no plaintext), shown only as set; every refusal
// is a clear error and changes nothing.
import assert from "node:assert/strict";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { newSealingKeyText } from "../common/sealed.ts";
import { trunkCredentialsKey } from "../api/service.ts";
import { loadSettings } from "../common/settings.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

Deno.test("an agent's bucket is set through the admin API and CLI with its secret never shown", async () => {
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() });
  try {
    const t = await makeTenant(api);
    const row = async () =>
      (await api.db.sql`select * from agent_storage where agent_id = ${t.agent_id}`)[0];
    // Refusals change nothing.
    for (
      const [body, field] of [
        [{ bucket: "calls" }, "access_key_id"],
        [{ bucket: "Not_A_Bucket", access_key_id: "A", secret_access_key: "s" }, "bucket"],
        [{ retention_days: -1 }, "retention_days"],
        [{ endpoint: "ftp://x" }, "endpoint"],
        [{ access_key_id: "A", secret_access_key: "s" }, "bucket"],
      ] as const
    ) {
      const r = await api.admin("/api/v1/storage.set", { agent_id: t.agent_id, ...body });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error.details.field, field, JSON.stringify(r.body));
      assert.equal(await row(), undefined);
    }
    const unknown = await api.admin("/api/v1/storage.set", { agent_id: "ag_nope", bucket: "b" });
    assert.equal(unknown.status, 404);

    const cli = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--no-check",
        "cli/admin.ts",
        "storage",
        "set",
        "--agent-id",
        t.agent_id,
        "--bucket",
        "acme-calls",
        "--region",
        "eu-west-1",
        "--access-key-id",
        "AKIAEXAMPLE",
        "--secret-access-key",
        SECRET,
        "--retention-days",
        "90",
      ],
      cwd: ROOT,
      env: { API_URL: api.url, ADMIN_TOKEN: api.adminToken },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(cli.stdout);
    assert.equal(cli.code, 0, new TextDecoder().decode(cli.stderr));
    assert.ok(!out.includes(SECRET));
    const storage = JSON.parse(out).storage;
    assert.equal(storage.secret_access_key_set, true);
    assert.equal(storage.retention_days, 90);
    const kept = await row();
    assert.ok(kept.secret_sealed && !kept.secret_sealed.includes(SECRET));
    // An API started with another key, or none, refuses to start rather than fail every upload.
    await assert.rejects(
      trunkCredentialsKey(api.db, loadSettings({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() })),
      /TRUNK_CREDENTIALS_KEY is wrong/,
    );
    await assert.rejects(trunkCredentialsKey(api.db, loadSettings({})), /bucket secrets/);
    // A later change keeps the sealed secret; removing the bucket keeps retention.
    const renamed = await api.admin("/api/v1/storage.set", { agent_id: t.agent_id, prefix: "p" });
    assert.equal(renamed.body.storage.secret_access_key_set, true);
    assert.equal((await row()).secret_sealed, kept.secret_sealed);
    const local = await api.admin("/api/v1/storage.set", {
      agent_id: t.agent_id,
      remove_bucket: true,
    });
    assert.equal(local.body.storage.bucket, null);
    assert.equal(local.body.storage.secret_access_key_set, false);
    assert.equal(local.body.storage.retention_days, 90);
  } finally {
    await api.close();
  }
});

Deno.test("without the sealing key a bucket's secret is refused, not stored", async () => {
  const api = await startTestApi();
  try {
    const t = await makeTenant(api);
    const r = await api.admin("/api/v1/storage.set", {
      agent_id: t.agent_id,
      bucket: "calls",
      access_key_id: "A",
      secret_access_key: SECRET,
    });
    assert.equal(r.status, 503);
    assert.match(r.body.error.message, /TRUNK_CREDENTIALS_KEY/);
    assert.equal((await api.db.sql`select 1 from agent_storage`).length, 0);
  } finally {
    await api.close();
  }
});
