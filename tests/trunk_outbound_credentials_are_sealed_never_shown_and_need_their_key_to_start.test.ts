// A trunk's outbound password (issue 34) is kept sealed under TRUNK_CREDENTIALS_KEY with the
// trunk's id as additional data: the row holds no plaintext, no reply shows it, it cannot be
// stored without the key, and an API does not start without the key that opens what is kept.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";
import { freshDatabase } from "./helpers/database.ts";
import { importSealingKey, newSealingKeyText, open } from "../common/sealed.ts";
import { startApiService } from "../api/service.ts";
import { loadSettings } from "../common/settings.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import { signIn } from "./helpers/console_client.ts";

const PASSWORD = "out-bound-Pa55word";

async function startRefused(
  env: Record<string, string>,
  db: Awaited<ReturnType<typeof freshDatabase>>,
) {
  try {
    const s = await startApiService(db, loadSettings({ ADMIN_TOKEN: "adm_x", ...env }), {
      telephony: loadTelephonySettings({}),
    });
    await s.close();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the API started");
}

Deno.test("outbound credentials are sealed to their trunk, never shown, and need the key", async () => {
  const db = await freshDatabase();
  const keyText = newSealingKeyText();
  try {
    const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: keyText }, { db, node: false });
    let trunkId: string, otherId: string;
    try {
      // An address is checked and given its port; a bad one names the field.
      for (const bad of ["sip carrier", "host:0", "host:70000", "[::1", "1.2.3", "a..b"]) {
        const r = await api.admin("/api/v1/trunks.create", {
          name: "x",
          allowed_sources: ["192.0.2.1"],
          outbound_address: bad,
        });
        assertEquals([r.status, r.body.error.details.field], [400, "outbound_address"], bad);
      }
      const noUser = await api.admin("/api/v1/trunks.create", {
        name: "x",
        allowed_sources: ["192.0.2.1"],
        outbound_address: "sip.example.test",
        outbound_password: PASSWORD,
      });
      assertEquals([noUser.status, noUser.body.error.details.field], [400, "outbound_username"]);

      const made = await api.admin("/api/v1/trunks.create", {
        name: "carrier",
        allowed_sources: ["192.0.2.1"],
        outbound_address: "[2001:db8::5]:5080",
        outbound_username: "acme",
        outbound_password: PASSWORD,
      });
      assertEquals(made.status, 200, JSON.stringify(made.body));
      trunkId = made.body.trunk.trunk_id;
      const other = await api.admin("/api/v1/trunks.create", {
        name: "other",
        allowed_sources: ["192.0.2.2"],
        outbound_address: "192.0.2.9",
        outbound_transport: "tcp",
      });
      otherId = other.body.trunk.trunk_id;
      assertEquals(
        [other.body.trunk.outbound_address, other.body.trunk.outbound_transport],
        ["192.0.2.9:5060", "tcp"],
      );
      assertEquals(other.body.trunk.outbound_credentials, false);

      // No reply carries the password or the sealed value.
      const replies = [
        made,
        await api.admin("/api/v1/trunks.get", { trunk_id: trunkId }),
        await api.admin("/api/v1/trunks.list"),
      ];
      const [row] = await db.sql`select outbound_password_sealed as sealed from trunks
        where id = ${trunkId}`;
      for (const r of replies) {
        const text = JSON.stringify(r.body);
        assert(!text.includes(PASSWORD) && !text.includes(row.sealed), text);
      }
      const shown = replies[1].body.trunk;
      assertEquals(
        [shown.outbound_address, shown.outbound_username, shown.outbound_credentials],
        ["[2001:db8::5]:5080", "acme", true],
      );
      assert(!("outbound_password" in shown) && !("outbound_password_sealed" in shown));

      // The row holds no plaintext; it opens with the key for this trunk only.
      const [dump] = await db.sql`select row_to_json(t)::text as text from trunks t
        where id = ${trunkId}`;
      assert(!dump.text.includes(PASSWORD));
      const key = await importSealingKey(keyText);
      assertEquals(await open(key, row.sealed, trunkId), PASSWORD);
      let moved = false;
      try {
        await open(key, row.sealed, otherId);
        moved = true;
      } catch { /* bound to its trunk */ }
      assert(!moved, "a sealed value opened on another trunk");

      // A new username alone keeps the sealed password; removing drops both.
      const renamed = await api.admin("/api/v1/trunks.update", {
        trunk_id: trunkId,
        outbound_username: "acme2",
      });
      assertEquals(renamed.body.trunk.outbound_username, "acme2");
      const [kept] = await db.sql`select outbound_password_sealed as s from trunks
        where id = ${trunkId}`;
      assertEquals(kept.s, row.sealed);
      // The console's trunk page edits them the same way and shows no password either.
      const op = await signIn(api);
      const saved = await op.post(`/console/phone/trunks/${otherId}`, {
        name: "other",
        sources: "192.0.2.2",
        outbound_address: "sip.other.test:5070",
        outbound_transport: "udp",
        outbound_username: "other-out",
        outbound_password: "console-Secret-9",
      });
      assertEquals(saved.status, 303, saved.html);
      const page = await op.get(`/console/phone/trunks/${otherId}`);
      assert(page.html.includes("sip.other.test:5070 over udp, as other-out"), page.html);
      assert(!page.html.includes("console-Secret-9"));
      const [viaConsole] = await db.sql`select outbound_password_sealed as s from trunks
        where id = ${otherId}`;
      assertEquals(await open(key, viaConsole.s, otherId), "console-Secret-9");

      const gone = await api.admin("/api/v1/trunks.update", {
        trunk_id: otherId,
        outbound_address: null,
      });
      assertEquals(gone.body.trunk.outbound_address, null);
    } finally {
      await api.close();
    }

    // Without a key nothing sealed can be stored, and nothing is written.
    const keyless = await startTestApi({}, { db: await freshDatabase(), node: false });
    try {
      const r = await keyless.admin("/api/v1/trunks.create", {
        name: "carrier",
        allowed_sources: ["192.0.2.1"],
        outbound_address: "sip.example.test",
        outbound_username: "acme",
        outbound_password: PASSWORD,
      });
      assertEquals([r.status, r.body.error.code], [500, "credentials_key_missing"]);
      assert(r.body.error.message.includes("TRUNK_CREDENTIALS_KEY"));
      const [n] = await keyless.db.sql`select count(*)::int as n from trunks`;
      assertEquals(n.n, 0);
    } finally {
      await keyless.close();
      await keyless.db.close();
    }

    // With sealed credentials kept, the API refuses to start without the key, or with another.
    const missing = await startRefused({}, db);
    assert(missing.includes("TRUNK_CREDENTIALS_KEY is not set"), missing);
    const wrong = await startRefused({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() }, db);
    assert(wrong.includes("TRUNK_CREDENTIALS_KEY is wrong"), wrong);
    const malformed = await startRefused({ TRUNK_CREDENTIALS_KEY: "short" }, db);
    assert(malformed.includes("base64 of 32"), malformed);
    const again = await startTestApi({ TRUNK_CREDENTIALS_KEY: keyText }, { db, node: false });
    await again.close();
  } finally {
    await db.close();
  }
});
