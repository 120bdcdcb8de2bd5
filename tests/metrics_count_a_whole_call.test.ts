// A whole call counts: after a call with the example brain, the worker's /metrics shows one call
// started and one ended with its reason, the turn latency histograms and the pacer's lateness;
// the API's /metrics counts the connect and a refusal by its code. The worker runs in this
// process (with the local engines) so the test holds its metrics and its admin token.
import { assert, assertEquals } from "./helpers/assert.ts";
import { speech, startInProcessCallService } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { sample } from "../common/metrics/testing.ts";

async function scrape(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assertEquals(res.status, 200);
  return await res.text();
}

/** Scrapes until `ready(text)`, or fails with the last text after `ms`. */
async function scrapeUntil(url: string, token: string, ready: (t: string) => boolean, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const text = await scrape(url, token);
    if (ready(text)) return text;
    if (Date.now() > until) throw new Error(`metrics never got there:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("a whole call is counted by the worker's and the API's metrics", async () => {
  const service = await startInProcessCallService(createExampleBrain());
  const { api, context, workerUrl, tenant } = service;
  try {
    const refused = await api.post("/api/v1/sessions.connect", { agent_id: tenant.agent_id });
    assertEquals(refused.body.error.code, "unauthorized");
    const { caller } = await service.call();

    // The greeting, then one turn and its reply played out, then the caller hangs up.
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    const during = await scrape(workerUrl, api.adminToken);
    assertEquals(sample(during, "voice_calls_started_total"), 1);
    assertEquals(sample(during, "voice_worker_active_calls", { node_id: context.nodeId }), 1);
    await caller.say(await speech("what is the weather like today"));
    await caller.waitForMessage(
      (m) =>
        m.type === "bot-output" &&
        (m.data as { spoken_status: string }).spoken_status === "completed" &&
        String((m.data as { text: string }).text).startsWith("You said"),
      20_000,
    );
    await caller.hangUp();

    const text = await scrapeUntil(
      workerUrl,
      api.adminToken,
      (t) => sample(t, "voice_calls_ended_total", { status: "ended" }) !== undefined,
    );
    assertEquals(sample(text, "voice_calls_started_total"), 1);
    assertEquals(sample(text, "voice_calls_ended_total", { status: "ended", reason: "hangup" }), 1);
    assertEquals(sample(text, "voice_worker_active_calls", { node_id: context.nodeId }), 0);
    assertEquals(
      sample(text, "voice_worker_capacity", { node_id: context.nodeId }),
      context.capacity,
    );
    for (const step of ["to_brain", "brain", "synthesis", "end_to_first_audio"]) {
      const n = sample(text, "voice_turn_latency_seconds_count", { step });
      assert(n !== undefined && n > 0, `no ${step} latency:\n${text}`);
    }
    // Greeting and reply each have a synthesis latency; only the caller's turn the others.
    assert(sample(text, "voice_turn_latency_seconds_count", { step: "synthesis" })! >= 2);
    assertEquals(sample(text, "voice_turn_latency_seconds_count", { step: "to_brain" }), 1);
    assert(sample(text, "voice_pacer_lateness_seconds_count")! > 50, "the call's audio ticks");
    assert(sample(text, "voice_speech_engine_queue_depth", { engine: "espeak-ng" }) === 0);
    assertEquals(sample(text, "voice_speech_engine_errors_total", { engine: "pocketsphinx" }), 0);
    assert(sample(text, "voice_db_pool_queries_total", { pool: "main" })! > 0);

    const apiText = await scrape(api.url, api.adminToken);
    assertEquals(sample(apiText, "voice_connect_duration_seconds_count", { outcome: "ok" }), 1);
    assertEquals(sample(apiText, "voice_connect_refusals_total", { code: "unauthorized" }), 1);
    assertEquals(
      sample(apiText, "voice_node_capacity", { node_id: context.nodeId }),
      context.capacity,
    );
    assertEquals(sample(apiText, "voice_node_live", { node_id: context.nodeId }), 1);
  } finally {
    await service.close();
  }
});
