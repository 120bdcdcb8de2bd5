// createPhoneSession: the session, reservation and token a phone call gets, on the node the
// connect statement chooses (SIP nodes only when asked), and nothing written when none can take it.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi } from "../../tests/helpers/api_server.ts";
import { registerNode } from "../../db/nodes.ts";
import { findPhoneNumber } from "../../db/phone_numbers.ts";
import { TokenVerifier } from "../../common/token.ts";
import { signingJwk } from "../../db/signing_key.ts";
import { createPhoneSession } from "./phone_session.ts";

Deno.test("a phone session takes a SIP node only when asked, and writes nothing when none has room", async () => {
  const api = await startTestApi({}, { node: false });
  try {
    const acme = await makeTenant(api, "acme", { record_by_default: true });
    await api.admin("/api/v1/numbers.create", { number: "+919876543210", agent_id: acme.agent_id });
    const route = (await findPhoneNumber(api.db.sql, "+919876543210"))!;
    await registerNode(api.db.sql, { node_id: "web", offer_base_url: "http://x/", capacity: 1 });

    let before = await rowCounts(api.db);
    const none = await createPhoneSession(api.deps, route, { caller: "+15550111", sip: true });
    assertEquals(none.kind, "unavailable");
    assertEquals(await rowCounts(api.db), before);

    const ws = await createPhoneSession(api.deps, route, { caller: "+15550111", sip: false });
    assert(ws.kind === "reserved");
    assertEquals([ws.node.node_id, ws.node.sip_port], ["web", null]);
    const claims = await (await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings)))
      .verify(ws.token, "web");
    assertEquals([claims.sid, claims.sub], [ws.session_id, acme.agent_id]);
    const [row] = await api.db.sql`select record_effective, metadata, key_id from sessions
      where id = ${ws.session_id}`;
    assertEquals([row.record_effective, row.key_id], [true, null]);
    assertEquals(row.metadata, { phone_dialled: "+919876543210", phone_caller: "+15550111" });

    // The web node is now full: a phone call finds no room and writes nothing.
    before = await rowCounts(api.db);
    const full = await createPhoneSession(api.deps, route, { sip: false });
    assertEquals(full.kind, "unavailable");
    assertEquals(await rowCounts(api.db), before);
  } finally {
    await api.close();
  }
});
