// Redaction per agent (issue 37) through the whole service: a worker process, the example brain,
// a werift caller typing a turn with a card number, a phone number and an e-mail address. On an
// agent that redacts them, the brain still gets the caller's words (its reply repeats them to the
// page) but the session record as the records API returns it (log rows, turns, what the brain
// said) and the worker's log output hold placeholders, never the numbers. The same call on an
// agent without redaction keeps them: the check that would find a leak finds one there.
import { assert, assertEquals } from "./helpers/assert.ts";
import { type CallService, startCallService } from "./helpers/call_harness.ts";
import { makeTenant, type Tenant } from "./helpers/api_server.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { TestCaller } from "../caller/caller.ts";

const CARD = "4532 0151 1283 0366";
const PHONE = "+91 98765 43210";
const EMAIL = "ravi.k@example.com";
const SAID = `my card is ${CARD}, call ${PHONE} or mail ${EMAIL}`;
const KEPT = "my card is [card], call [phone] or mail [email]";
/** Every form the secrets could be written in: as typed, and digits only. */
const SECRETS = [CARD, CARD.replaceAll(" ", ""), "9876543210", "98765 43210", EMAIL];

const text = (m: { data?: unknown }) => String((m.data as { text?: unknown })?.text ?? "");

/** One typed-turn call as `tenant`'s agent; the ended session record as sessions.get gives it. */
async function typedCall(service: CallService, tenant: Tenant) {
  const r = await service.api.post(
    "/api/v1/sessions.connect",
    { agent_id: tenant.agent_id },
    tenant.sk,
  );
  assertEquals(r.status, 200, JSON.stringify(r.body));
  const params = r.body.webrtc_request_params;
  const caller = await TestCaller.connect({ offerUrl: params.endpoint, headers: params.headers });
  try {
    await caller.ready();
    caller.openMicrophone();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    caller.sendRtvi("send-text", { content: SAID, options: {} });
    // The brain got the real words: the example brain says them back.
    await caller.waitForMessage(
      (m) => m.type === "bot-output" && text(m) === `You said: ${SAID}`,
      15_000,
    );
  } finally {
    await caller.hangUp();
  }
  return await service.record(r.body.session_id, "ended");
}

const leaksIn = (written: string) => SECRETS.filter((s) => written.includes(s));

Deno.test({
  name: "an agent that redacts keeps placeholders where the caller gave a card and an e-mail",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const service = await startCallService(createExampleBrain());
    try {
      const redacting = service.tenant;
      const set = await service.api.admin("/api/v1/agents.redaction.set", {
        agent_id: redacting.agent_id,
        categories: ["card", "phone", "email"],
      });
      assertEquals(set.status, 200, JSON.stringify(set.body));
      assertEquals(set.body.redaction.categories, ["card", "phone", "email"]);

      const record = await typedCall(service, redacting);
      const written = JSON.stringify(record);
      assertEquals(leaksIn(written), [], written);
      const typed = record.timings.turns.find((t: { trigger: string }) => t.trigger === "typed");
      assertEquals(typed.user_text, KEPT);
      const rows = (kind: string) =>
        record.log.filter((e: { kind: string }) => e.kind === kind).map((e: { data: unknown }) =>
          e.data
        );
      assertEquals(rows("typed_text").map((d: { text: string }) => d.text), [KEPT]);
      assert(
        rows("user_turn").some((d: { text: string }) => d.text === KEPT),
        "the turn sent to the brain is not in the record as redacted",
      );
      assert(written.includes(`You said: ${KEPT}`), "the brain's reply is not kept redacted");
      assertEquals(leaksIn(service.worker.child.output()), []);

      // The same call on an agent that does not redact keeps every secret: a leak is found.
      const plain = await makeTenant(service.api, "plain", { brain_url: service.brainUrl });
      const kept = JSON.stringify(await typedCall(service, plain));
      assertEquals(leaksIn(kept), SECRETS.filter((s) => SAID.includes(s)));
      assert(!kept.includes("[card]"), "an agent without redaction got placeholders");
    } finally {
      await service.close();
    }
  },
});
