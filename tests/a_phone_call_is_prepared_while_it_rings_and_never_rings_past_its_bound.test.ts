// A phone call starts while it rings (media/sip/ringing_call.ts): the brain's SessionStart
// reaches it before the worker answers the INVITE, so its greeting is ready at the 200 OK; a brain
// that never greets does not keep the caller ringing (the call is answered at the bound); a brain
// that cannot be reached has the INVITE refused 480, never answered and hung up. The worker's real
// SIP service and admission with the local engines, a raw UDP trunk, a raw WebSocket brain.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { type RawTrunk, withRawTrunk } from "./helpers/raw_sip_trunk.ts";
import { rawBrain, type RawBrainCall } from "./helpers/raw_brain.ts";
import { localEngines } from "./helpers/local_engines.ts";
import type { Call } from "../media/call/call.ts";
import type { CallEngines } from "../media/engines/call_engines.ts";

/** A session for an agent whose brain is `brainUrl`, and its token for the trunk's INVITE. */
async function session(api: TestApi, brainUrl: string) {
  const tenant = await makeTenant(api, "acme", { brain_url: brainUrl });
  const r = await api.post("/api/v1/sessions.connect", { agent_id: tenant.agent_id }, tenant.sk);
  assertEquals(r.status, 200);
  return {
    id: r.body.session_id as string,
    token: r.body.webrtc_request_params.headers.Authorization.slice(7) as string,
  };
}

/** The 200's arrival at the trunk, or undefined when the worker gave another final answer. */
function okAt(trunk: RawTrunk): number | undefined {
  const i = trunk.answers.findIndex((a) => a.status === 200);
  return i < 0 ? undefined : trunk.answeredAt[i];
}

/** Ends the node's call (our BYE) and waits for its record, so nothing outlives the test. */
async function hangUp(trunk: RawTrunk): Promise<void> {
  for (const call of trunk.calls.values()) {
    await (call as Call).end("ended", "test_over");
    await (call as Call).ended;
  }
}

/** What the steps share: the engines and the API start once (seconds each), a brain per step. */
let shared: { engines: CallEngines; api: TestApi } | undefined;

async function withRig(
  script: (call: RawBrainCall) => void | Promise<void>,
  fn: (api: TestApi, trunk: RawTrunk, brainUrl: string) => Promise<void>,
  ringForGreetingMaxMs?: number,
) {
  const { engines, api } = shared!;
  const served = rawBrain(script).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  try {
    await withRawTrunk(api, (trunk) => fn(api, trunk, served.url), {
      engines,
      settings: { ringForGreetingMaxMs },
    });
  } finally {
    await served.shutdown();
  }
}

Deno.test("a phone call is prepared while it rings and never rings past its bound", async (t) => {
  shared = { engines: await localEngines(), api: await startTestApi() };
  try {
    await t.step(
      "the brain's SessionStart reaches it before the worker sends 200 OK",
      sessionStartFirst,
    );
    await t.step("a brain that never greets: the call is answered at the bound", silentBrain);
    await t.step("a brain that cannot be reached: the INVITE is refused 480", unreachableBrain);
  } finally {
    await shared.api.close();
    await shared.engines.close();
    shared = undefined;
  }
});

async function sessionStartFirst() {
  let sessionStartAt: number | undefined;
  await withRig(async (call) => {
    await call.next("session_start");
    sessionStartAt = performance.now();
    call.send("greeting", { text: "Hello, you are through to the front desk." });
  }, async (api, trunk, brainUrl) => {
    const s = await session(api, brainUrl);
    trunk.invite(s.token, "prepared-1@trunk");
    assertEquals((await trunk.final(10_000))?.status, 200);
    const ok = okAt(trunk)!;
    assert(sessionStartAt !== undefined, "the brain never got SessionStart");
    assert(sessionStartAt < ok, `SessionStart ${sessionStartAt} came after the 200 (${ok})`);
    assert(trunk.answers.some((a) => a.status === 180), "no 180 while the call was prepared");
    await hangUp(trunk);
  });
}

async function silentBrain() {
  let sessionStarted = false;
  await withRig(async (call) => {
    await call.next("session_start");
    sessionStarted = true; // and never a Greeting
  }, async (api, trunk, brainUrl) => {
    const s = await session(api, brainUrl);
    trunk.invite(s.token, "silent-brain@trunk");
    // The bound is 1 s here; 10 s is the brain's greeting timeout, which must not be waited for.
    assertEquals((await trunk.final(8_000))?.status, 200);
    assert(sessionStarted, "the brain never got SessionStart");
    assertEquals(trunk.calls.size, 1, "the answered call goes on, waiting for its greeting");
    await hangUp(trunk);
  }, 1_000);
}

async function unreachableBrain() {
  const gone = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (gone.addr as Deno.NetAddr).port;
  gone.close(); // nothing listens there now
  await withRig(() => {}, async (api, trunk) => {
    const s = await session(api, `ws://127.0.0.1:${port}/brain`);
    trunk.invite(s.token, "no-brain@trunk");
    const final = await trunk.final(10_000);
    assertEquals(final?.status, 480, `answers: ${trunk.answers.map((a) => a.status)}`);
    assert(!trunk.answers.some((a) => a.status === 200), "a 200 went out");
    // deno-lint-ignore no-explicit-any
    let record: any;
    for (let i = 0; i < 100; i++) {
      record = (await api.admin("/api/v1/sessions.get", { session_id: s.id })).body;
      if (record.status === "failed") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals(record.status, "failed");
    assert(String(record.end_reason).startsWith("brain_"), `end: ${record.end_reason}`);
  });
}
