// The caller simulator against the real service: the API in this process, a real worker process,
// and brains served by the brain SDK, one agent per brain.
import assert from "node:assert/strict";
import { createBrain, type ServedBrain } from "../sdk/brain/mod.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { makeTenant, type Tenant } from "../tests/helpers/api_server.ts";
import { speech, startCallService } from "../tests/helpers/call_harness.ts";
import { type CallEvent, formatEvent, simulateCall, type SimulationOptions } from "./simulator.ts";
import type { SpokenTurn } from "./script.ts";

const GREETING = "Hello! I am the example brain. Say something and I will repeat it.";

async function turns(...texts: string[]): Promise<SpokenTurn[]> {
  return await Promise.all(texts.map(async (label) => ({ label, pcm: await speech(label) })));
}

Deno.test("the caller simulator against the real service", async (t) => {
  const service = await startCallService(createExampleBrain());
  const served: ServedBrain[] = [];
  /** An agent of its own for `brain`, in the same service. */
  const agentFor = async (name: string, brain: ReturnType<typeof createBrain>) => {
    const s = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
    served.push(s);
    return await makeTenant(service.api, name, { brain_url: s.url });
  };
  const run = (tenant: Tenant, rest: Partial<SimulationOptions> & { turns: SpokenTurn[] }) => {
    const lines: string[] = [];
    return simulateCall({
      api: service.api.url,
      key: tenant.sk,
      agent: tenant.agent_id,
      timeoutMs: 20_000,
      onEvent: (e) => lines.push(formatEvent(e)),
      ...rest,
    }).then((result) => ({ result, text: lines.join("\n") }));
  };

  try {
    await t.step("the example brain greets and repeats the caller: exit 0", async () => {
      const { result, text } = await run(service.tenant, {
        turns: await turns("what is the weather like today"),
      });
      assert.equal(result.exit_code, 0, text);
      assert.equal(result.failure, null);
      assert.match(text, /^session: \S+\nconnected: bot-ready \d+ ms after client-ready\n/);
      assert.deepEqual(result.greeting?.bot, [GREETING]);
      assert.ok((result.greeting?.latency.bot_audio ?? -1) >= 0, text);

      const [turn] = result.turns;
      assert.equal(turn.said, "what is the weather like today");
      assert.equal(turn.heard.length, 1, text);
      assert.ok(turn.heard[0].length > 0);
      assert.deepEqual(turn.bot, [`You said: ${turn.heard[0]}`]);
      for (const k of ["transcript", "bot_output", "bot_audio"] as const) {
        assert.ok(typeof turn.latency[k] === "number" && turn.latency[k]! >= 0, `${k}: ${text}`);
      }
      // The conversation in order: the greeting, the caller, what was heard, the brain's
      // action (the example dispatches the transcript), the reply, its latencies.
      const kinds = result.events.map((e: CallEvent) => e.type);
      assert.deepEqual(kinds.filter((k) => k !== "action"), [
        "session",
        "ready",
        "bot",
        "latency",
        "caller",
        "heard",
        "bot",
        "latency",
        "summary",
        "done",
      ]);
      // The summary is over the turns' figures measured from the audio sent and received.
      assert.equal(result.summary.n, 1);
      assert.equal(result.summary.p50, turn.latency.bot_audio);
      assert.match(
        text,
        /\nend of speech → first bot audio at the caller: p50 \d+ ms, p99 \d+ ms over 1 turn; first turn \d+ ms, later turns p50 -\n/,
      );
      assert.ok(text.includes(`\nbot: ${GREETING}\n`), text);
      assert.ok(text.includes(`\nheard as: ${turn.heard[0]}\n`), text);
      assert.match(text, /\nactions: \{"type":"transcript","data":\{"turn_id":"t1",/);
      assert.ok(text.endsWith("\npassed: greeting and 1 turn"), text);

      // The simulator hung up: the service ended the session as a caller hang-up.
      const record = await service.record(result.session_id!, "ended");
      assert.equal(record.end_reason, "hangup");
      // The caller's own measure of the turn reached the record.
      const t1 = (record.timings.turns as { turn_id: string; latency_ms: Record<string, number> }[])
        .find((t) => t.turn_id === "t1");
      assert.equal(t1?.latency_ms.heard_at_caller, turn.latency.bot_audio);
    });

    await t.step('a brain whose greeting is empty fails with exit 1 "no greeting"', async () => {
      const tenant = await agentFor(
        "silent",
        createBrain({ onSessionStart: () => "", onTurn: () => {} }),
      );
      const { result, text } = await run(tenant, { turns: [], timeoutMs: 5000 });
      assert.equal(result.exit_code, 1, text);
      assert.equal(result.failure?.kind, "no greeting");
      assert.match(
        text,
        /\nFAILED \(no greeting\): no greeting from the bot within 5 s of bot-ready/,
      );
      assert.equal(result.turns.length, 0);
    });

    await t.step('a brain that never answers a turn fails with exit 1 "timeout"', async () => {
      const tenant = await agentFor(
        "mute",
        createBrain({
          onSessionStart: () => "Hi.",
          // Never answers: the reply promise settles only when the turn is cancelled.
          onTurn: (turn) =>
            new Promise<void>((resolve) => turn.signal.addEventListener("abort", () => resolve())),
        }),
      );
      const { result, text } = await run(tenant, {
        turns: await turns("is anybody there"),
        timeoutMs: 4000,
      });
      assert.equal(result.exit_code, 1, text);
      assert.equal(result.failure?.kind, "timeout");
      assert.match(
        text,
        /\nFAILED \(timeout\): no reply from the bot within 4 s of the final transcript \(turn 1\)/,
      );
      assert.deepEqual(result.greeting?.bot, ["Hi."]);
      assert.equal(
        result.turns[0].heard.length,
        1,
        "the turn was heard, only the reply is missing",
      );
    });

    await t.step("a bot hanging up after the last turn's reply is a normal end", async () => {
      const tenant = await agentFor(
        "brief",
        createBrain({
          onSessionStart: () => "Hi.",
          async *onTurn(_turn, session) {
            yield "Thanks, goodbye.";
            session.end("done");
          },
        }),
      );
      const one = await run(tenant, { turns: await turns("hello there") });
      assert.equal(one.result.exit_code, 0, one.text);
      // The worker's call-ended notice says why.
      assert.match(
        one.text,
        /\nbot: Thanks, goodbye\.\n(.*\n)*bot hung up \(ended: brain_ended\)\n/,
      );
      assert(!/actions: .*call-ended/.test(one.text), "the notice is not a brain action");

      const two = await run(tenant, { turns: await turns("hello there", "are you still there") });
      assert.equal(two.result.exit_code, 1, two.text);
      assert.equal(two.result.failure?.kind, "hung up early");
      assert.match(
        two.text,
        /FAILED \(hung up early\): the bot hung up after turn 1 with 1 script turn left/,
      );
      assert.equal(two.result.turns.length, 1, "the second turn was never said");
    });

    await t.step("a brain that cannot be reached is a failed call, named: exit 1", async () => {
      const tenant = await makeTenant(service.api, "gone", {
        brain_url: "ws://127.0.0.1:9/brain",
      });
      const { result, text } = await run(tenant, { turns: [], timeoutMs: 10_000 });
      assert.equal(result.exit_code, 1, text);
      assert.equal(result.failure?.kind, "call failed");
      assert.equal(result.failure?.code, "brain_unreachable");
      assert.match(text, /\nerror \(fatal\): the brain could not be reached/);
      assert.match(text, /\nFAILED \(call failed\): the service failed the call during /);
    });
  } finally {
    for (const s of served) await s.shutdown();
    await service.close();
  }
});
