// The console's phone page: trunks and numbers made from forms, refusals shown on the page with
// nothing written, the trunk password never shown back, signed-out users sent to sign in.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { consoleClient, signIn } from "../../tests/helpers/console_client.ts";

const PASSWORD = "console trunk secret";

Deno.test("console phone numbers and trunks", async (t) => {
  const api = await startTestApi();
  const op = await signIn(api);
  const counts = async () => {
    const [row] = await api.db.sql`select (select count(*)::int from trunks) as trunks,
      (select count(*)::int from phone_numbers) as numbers`;
    return row;
  };
  try {
    const acme = await makeTenant(api, "acme");
    let trunkId = "";

    await t.step("signed out, the page sends you to sign in", async () => {
      const page = await consoleClient(api).get("/console/phone");
      assertEquals(page.status, 303);
      assertMatch(page.location!, /sign-in/);
    });

    await t.step("a trunk with sources and credentials; the password is never shown", async () => {
      const made = await op.post("/console/phone/trunks", {
        name: "Carrier",
        sources: "198.51.100.0/24\n203.0.113.9",
        auth_username: "acme",
        auth_password: PASSWORD,
        auth_realm: "",
      });
      assertEquals(made.status, 303);
      const [row] = await api.db.sql`select id, allowed_sources, auth_realm from trunks`;
      trunkId = row.id;
      assertEquals([row.allowed_sources, row.auth_realm], [
        ["198.51.100.0/24", "203.0.113.9"],
        "voice",
      ]);
      const page = await op.get("/console/phone");
      assertMatch(page.html, /acme \(realm voice\)/);
      assert(!page.html.includes(PASSWORD));
    });

    await t.step(
      "a refused trunk keeps the form (without the password) and writes nothing",
      async () => {
        const before = await counts();
        const bad = await op.post("/console/phone/trunks", {
          name: "Bad",
          sources: "10.0.0.0/40",
          auth_username: "u",
          auth_password: PASSWORD,
          auth_realm: "",
        });
        assertEquals(bad.status, 400);
        assertMatch(bad.html, /is not an IP address or CIDR range/);
        assertMatch(bad.html, /10\.0\.0\.0\/40/);
        assert(!bad.html.includes(PASSWORD), "the password was put back into the form");
        assertEquals(await counts(), before);
      },
    );

    await t.step("a number: added behind the trunk, refused when malformed or taken", async () => {
      const ok = await op.post("/console/phone/numbers", {
        number: "+919876543210",
        agent_id: acme.agent_id,
        trunk_id: trunkId,
      });
      assertEquals(ok.status, 303);
      const before = await counts();
      for (
        const [number, message] of [
          ["9876543210", /E\.164/],
          ["+919876543210", /already leads to an agent/],
        ]
      ) {
        const r = await op.post("/console/phone/numbers", {
          number: number as string,
          agent_id: acme.agent_id,
          trunk_id: "",
        });
        assertEquals(r.status, 400);
        assertMatch(r.html, message as RegExp);
      }
      assertEquals(await counts(), before);
      const page = await op.get("/console/phone");
      assertMatch(page.html, /\+919876543210/);
    });

    await t.step(
      "the trunk's page changes its sources; a new username needs the password",
      async () => {
        const page = await op.get(`/console/phone/trunks/${trunkId}`);
        assertEquals(page.status, 200);
        assert(!page.html.includes(PASSWORD));
        const [old] = await api.db.sql`select auth_ha1_md5 from trunks where id = ${trunkId}`;
        const refused = await op.post(`/console/phone/trunks/${trunkId}`, {
          name: "Carrier",
          sources: "198.51.100.0/24",
          auth_username: "someone-else",
          auth_password: "",
          auth_realm: "voice",
        });
        assertEquals(refused.status, 400);
        assertMatch(refused.html, /needs auth_password too/);
        const saved = await op.post(`/console/phone/trunks/${trunkId}`, {
          name: "Carrier 2",
          sources: "198.51.100.0/24",
          auth_username: "acme",
          auth_password: "",
          auth_realm: "voice",
        });
        assertEquals(saved.status, 303);
        const [row] = await api.db.sql`select name, allowed_sources, auth_ha1_md5 from trunks
        where id = ${trunkId}`;
        assertEquals([row.name, row.allowed_sources, row.auth_ha1_md5], [
          "Carrier 2",
          ["198.51.100.0/24"],
          old.auth_ha1_md5,
        ]);
      },
    );

    await t.step("turn off, refuse deleting a trunk in use, delete", async () => {
      await op.post("/console/phone/numbers/enabled", { number: "+919876543210", enabled: "off" });
      const [n] = await api.db.sql`select enabled from phone_numbers`;
      assertEquals(n.enabled, false);
      const inUse = await op.post("/console/phone/trunks/delete", { trunk_id: trunkId });
      assertEquals(inUse.status, 400);
      assertMatch(inUse.html, /still use this trunk/);
      assertEquals((await counts()).trunks, 1);
      await op.post("/console/phone/numbers/delete", { number: "+919876543210" });
      await op.post("/console/phone/trunks/delete", { trunk_id: trunkId });
      assertEquals(await counts(), { trunks: 0, numbers: 0 });
    });
  } finally {
    await api.close();
  }
});
