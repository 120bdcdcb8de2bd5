// The dispatcher's bounds, against real receivers: a reply is read only up to its byte limit, a
// receiver that never answers, or answers and stalls, is given up on at the request timeout
// (and retried), and a redirect is not followed. The API does not start with endpoints kept and
// no key, or a wrong one.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { freshDatabase } from "../../tests/helpers/database.ts";
import { sessionWriter } from "../../tests/helpers/webhook_sessions.ts";
import { createAgent } from "../../db/agents.ts";
import { createEndpoint } from "../../db/webhooks.ts";
import { importSealingKey, newSealingKeyText, seal } from "../../common/sealed.ts";
import { newWebhookSecret } from "../../common/webhooks/signature.ts";
import { setQuiet } from "../../common/log.ts";
import { WebhookDispatcher } from "./dispatcher.ts";
import { checkWebhookKey } from "./key_check.ts";

setQuiet(true);

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("not refused");
}

/** One byte at once, the rest after 5 s. */
function stallingBody(): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    async pull(c) {
      if (sent++ > 0) await new Promise((r) => setTimeout(r, 5000));
      c.enqueue(new Uint8Array([0x7b]));
      if (sent > 1) c.close();
    },
  });
}

Deno.test("a reply is read up to its limit, a silent or stalling receiver times out, a redirect is a failure", async () => {
  const db = await freshDatabase({ embedded: true });
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/big") return new Response("x".repeat(1 << 20), { status: 500 });
      if (path === "/moved") return Response.redirect("https://elsewhere.example.com/", 307);
      if (path === "/stalls") return new Response(stallingBody(), { status: 200 });
      await new Promise((r) => setTimeout(r, 2000)); // /silent: answers too late
      return new Response(null, { status: 204 });
    },
  );
  try {
    const key = await importSealingKey(newSealingKeyText());
    const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
    for (const path of ["big", "moved", "silent", "stalls"]) {
      const id = `whk_${path}`;
      await createEndpoint(db.sql, {
        endpoint_id: id,
        workspace_id: agent.workspace_id,
        agent_id: null,
        url: `http://127.0.0.1:${server.addr.port}/${path}`,
        description: "",
        event_types: [],
        secret_sealed: await seal(key, newWebhookSecret(), id),
      });
    }
    await (await sessionWriter(db.sql, agent)).start();
    const dispatcher = new WebhookDispatcher(db.sql, key, {
      timeoutMs: 300,
      maxResponseBytes: 1000,
    });
    const started = Date.now();
    assertEquals(await dispatcher.pass(), 4);
    // The stall (5 s) is far past the timeout, so a loaded host cannot pass it by luck.
    assert(Date.now() - started < 3000, `the pass took ${Date.now() - started} ms`);
    const rows = await db.sql<
      {
        endpoint_id: string;
        status_code: number | null;
        error: string;
        excerpt: string | null;
        next: Date;
        state: string;
      }[]
    >`select d.endpoint_id, a.status_code, a.error, a.response_excerpt as excerpt,
        d.next_attempt_at as next, d.status as state
      from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      order by d.endpoint_id`;
    const [big, moved, silent, stalls] = rows;
    assertEquals([big.status_code, big.excerpt?.length, big.state], [500, 1000, "pending"]);
    assertEquals([moved.status_code, moved.error], [307, "HTTP 307"]);
    assertEquals(silent.status_code, null);
    assertMatch(silent.error, /no reply within 300 ms/);
    assert(silent.next.getTime() >= Date.now() - 1000, "no retry scheduled");
    // Answered at once, then its body stalled: a failure at the same timeout, retried.
    assertEquals([stalls.status_code, stalls.error, stalls.state], [
      200,
      "no reply within 300 ms",
      "pending",
    ]);
  } finally {
    ac.abort();
    await server.finished;
    await db.close();
  }
});

Deno.test("the API does not start with endpoints kept and no key, or a key that does not open them", async () => {
  const db = await freshDatabase({ embedded: true });
  try {
    const key = await importSealingKey(newSealingKeyText());
    await checkWebhookKey(db.sql, undefined); // no endpoints: no key needed
    const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
    await createEndpoint(db.sql, {
      endpoint_id: "whk_1",
      workspace_id: agent.workspace_id,
      agent_id: null,
      url: "https://crm.example.com/",
      description: "",
      event_types: [],
      secret_sealed: await seal(key, newWebhookSecret(), "whk_1"),
    });
    assertMatch(
      await refusal(checkWebhookKey(db.sql, undefined)),
      /TRUNK_CREDENTIALS_KEY is not set/,
    );
    const other = await importSealingKey(newSealingKeyText());
    assertMatch(await refusal(checkWebhookKey(db.sql, other)), /TRUNK_CREDENTIALS_KEY is wrong/);
    await checkWebhookKey(db.sql, key);
  } finally {
    await db.close();
  }
});
