// Webhooks through the real API and a real receiver verifying with npm:standardwebhooks: the
// endpoint is managed through the admin routes (its secret shown once), the receiver is down for
// over an hour while sessions start and end, and when it comes back it gets every event, each
// session's in order, with the webhook-id it was first tried with; a redelivery carries the same
// id; 24 hours of failures give a delivery up, which frees the session's next event. The backoff
// runs on a manual clock, so nothing here waits for it.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { WebhookReceiver } from "./helpers/webhook_receiver.ts";
import { sessionWriter } from "./helpers/webhook_sessions.ts";
import { WebhookDispatcher } from "../api/webhooks/dispatcher.ts";
import { importSealingKey, newSealingKeyText } from "../common/sealed.ts";

const HOUR = 3600_000;

async function setUp() {
  const keyText = newSealingKeyText();
  // The API's own dispatcher idles (an hour between passes): the test turns a manual-clock one.
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: keyText }, {
    service: { webhooks: { tickMs: HOUR } },
  });
  const tenant = await makeTenant(api);
  const receiver = new WebhookReceiver();
  receiver.up();
  const made = await api.admin("/api/v1/webhooks.create", {
    agent_id: tenant.agent_id,
    url: receiver.url,
    description: "CRM",
  });
  assertEquals(made.status, 200, JSON.stringify(made.body));
  receiver.setSecret(made.body.secret);
  let now = Date.now();
  const clock = { now: () => now, advance: (ms: number) => void (now += ms) };
  const dispatcher = new WebhookDispatcher(api.db.sql, await importSealingKey(keyText), {
    clock,
    random: () => 0.5,
    timeoutMs: 2000,
  });
  const writer = await sessionWriter(api.db.sql, tenant);
  return { api, tenant, receiver, made, clock, dispatcher, writer };
}

Deno.test("a receiver down for an hour gets every event when back, each session's in order, with the ids first tried", async () => {
  const { api, tenant, receiver, made, clock, dispatcher, writer } = await setUp();
  try {
    // Managed like keys: the secret once, plain http refused elsewhere than this machine.
    assertMatch(made.body.secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
    const refused = await api.admin("/api/v1/webhooks.create", {
      agent_id: tenant.agent_id,
      url: "http://crm.example.com/hooks",
    });
    assertEquals(refused.status, 400);
    assert(refused.body.error.message.includes("https://"), refused.body.error.message);
    const listed = await api.admin("/api/v1/webhooks.list", { agent_id: tenant.agent_id });
    assertEquals(listed.body.endpoints.length, 1);
    assert(!JSON.stringify(listed.body).includes(made.body.secret.slice(6)), "secret shown again");
    const endpointId = made.body.endpoint.endpoint_id;

    await receiver.down();
    const a = await writer.start();
    const b = await writer.start();
    await writer.end(a);
    const c = await writer.start();
    await writer.end(b);
    await writer.end(c);

    // Down for over an hour: every due delivery is tried and fails; none of a session's later
    // events is tried before its earlier one is through.
    for (let t = 0; t < 7; t++) {
      await dispatcher.drain();
      clock.advance(10 * 60_000);
    }
    const pending = await api.admin("/api/v1/webhooks.deliveries", { endpoint_id: endpointId });
    assertEquals(pending.body.deliveries.length, 6);
    for (const d of pending.body.deliveries) {
      assertEquals(d.status, "pending");
      if (d.type === "session.started") assert(d.attempts >= 3, `${d.attempts} attempts`);
      else assertEquals(d.attempts, 0, "an ended event was tried before its session's start");
    }
    assertEquals(receiver.seenIds.length, 0);

    receiver.up(); // the same port
    clock.advance(31 * 60_000); // past the longest backoff
    for (let i = 0; i < 5 && receiver.received.length < 6; i++) await dispatcher.drain();
    const got = await receiver.waitFor(6, 1000);
    assertEquals(receiver.refused, []);
    for (const s of [a, b, c]) {
      const mine = got.filter((e) => e.data.session_id === s).map((e) => e.type);
      assertEquals(mine, ["session.started", "session.ended"], s);
    }
    const ids = (await api.db.sql<{ id: string }[]>`select id from webhook_events`).map((r) =>
      r.id
    );
    assertEquals(new Set(got.map((e) => e.id)), new Set(ids));

    // What a session.ended carries.
    const ended = got.find((e) => e.type === "session.ended" && e.data.session_id === a)!;
    assertEquals(ended.data.status, "ended");
    assertEquals(ended.data.end_reason, "caller_hung_up");
    assertEquals(ended.data.agent_id, tenant.agent_id);
    assertEquals(ended.data.metadata, { order: "A-17" });
    assertEquals(ended.data.transcript[0].caller, "when do you close");
    assertEquals(ended.data.transcript[0].bot[0].heard, "We close");
    assertEquals(ended.data.transcript[0].bot[0].cut_off, true);
    assertEquals(ended.data.transcript[0].latency_ms.brain, 150);
    assertEquals(ended.data.usage.synthesized_characters, 22);
    assert(typeof ended.data.call_seconds === "number");

    // The delivery log: the failed tries, then the 2xx, each with its latency.
    const log = await api.admin("/api/v1/webhooks.deliveries", { endpoint_id: endpointId });
    const first = log.body.deliveries.find((d: { event_id: string }) => d.event_id === got[0].id);
    assertEquals(first.status, "delivered");
    const tries = await api.admin("/api/v1/webhooks.attempts", { delivery_id: first.delivery_id });
    const codes = tries.body.attempts.map((t: { status_code: number | null }) => t.status_code);
    assertEquals(codes.at(-1), 204);
    assert(codes.slice(0, -1).every((c: number | null) => c === null), JSON.stringify(codes));
    assert(tries.body.attempts.every((t: { latency_ms: number }) => t.latency_ms >= 0));

    // Redelivery: the same event, the same id.
    const again = await api.admin("/api/v1/webhooks.redeliver", {
      delivery_id: first.delivery_id,
    });
    assertEquals(again.body.delivery.status, "pending");
    await dispatcher.drain();
    await receiver.waitFor(7, 1000);
    assertEquals(receiver.received[6].id, got[0].id);
    const missing = await api.admin("/api/v1/webhooks.redeliver", { delivery_id: "999999" });
    assertEquals(missing.status, 404);
  } finally {
    await receiver.down();
    await api.close();
  }
});

Deno.test("after 24 hours of failures a delivery is given up, and the session's next event goes", async () => {
  const { api, receiver, made, clock, dispatcher, writer } = await setUp();
  try {
    await receiver.down();
    const s = await writer.start();
    await writer.end(s);
    for (let t = 0; t <= 25 * 2; t++) {
      await dispatcher.drain();
      clock.advance(30 * 60_000);
    }
    const rows = await api.db.sql<{ type: string; status: string; attempts: number }[]>`
      select ev.type, d.status, d.attempts from webhook_deliveries d
        join webhook_events ev on ev.id = d.event_id order by d.id`;
    assertEquals(rows[0].type, "session.started");
    assertEquals(rows[0].status, "failed");
    assert(rows[0].attempts > 24, `${rows[0].attempts} attempts`);
    assertEquals(rows[1].type, "session.ended");
    // Its own 24 hours start at its first try, not while it waited its turn.
    assertEquals(rows[1].status, "pending");
    assert(rows[1].attempts >= 1, "the ended event never went after its start was given up");
    // A failed delivery can still be sent by hand once the receiver is back.
    receiver.up();
    const [d] = (await api.admin("/api/v1/webhooks.deliveries", {
      endpoint_id: made.body.endpoint.endpoint_id,
      status: "failed",
    })).body.deliveries;
    assertEquals(
      (await api.admin("/api/v1/webhooks.redeliver", { delivery_id: d.delivery_id }))
        .status,
      200,
    );
    clock.advance(31 * 60_000);
    for (let i = 0; i < 3 && receiver.received.length < 2; i++) await dispatcher.drain();
    assertEquals(
      new Set(receiver.received.map((e) => e.type)),
      new Set(["session.started", "session.ended"]),
    );
  } finally {
    await receiver.down();
    await api.close();
  }
});
