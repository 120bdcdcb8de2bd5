// The whole outbound path of issue 34, nothing in between faked: POST /api/v1/calls.dial on the
// real API (with TRUNK_CREDENTIALS_KEY) → a real worker process with SIP → SIPp 3.6 as the trunk.
// The trunk, its digest credentials and the number are made through the admin API, so the
// password SIPp's verifyauth checks is the one the API sealed, opened for the dial and handed to
// the worker in the WorkerDial: the API/worker contract (common/dial.ts) holds end to end.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { assertSippPassed, freeUdpPort, runSippTrunk } from "./helpers/sipp.ts";
import { challengesThenAnswers, refusesWith } from "./helpers/sipp_trunk.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { eventually } from "./helpers/live_call.ts";
import { newSealingKeyText } from "../common/sealed.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { rms } from "../caller/wav.ts";

const OUR_NUMBER = "+14155550100";
const CALLEE = "+442071838750";
const USER = "acme-out";
const PASSWORD = "sealed-then-opened-42";

const loudFrames = (pcm: Int16Array, level = 500) => {
  let n = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm, i, i + 160) > level) n++;
  return n;
};

Deno.test("calls.dial over a trunk reaches a SIPp callee and answers its digest challenge", async (t) => {
  const brain = createBrain({
    onSessionStart: () => "Hello, this is the hotel calling about your booking.",
    onTurn: () => "Thank you.",
  });
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() }, { node: false });
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorkerProcess(api.db.url, undefined, {
      SIP_PORT: String(await freeUdpPort()),
      RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "recordings-" }),
    });
    const tenant = await makeTenant(api, "acme", { brain_url: served.url });
    const trunkPort = await freeUdpPort();
    const trunk = await api.admin("/api/v1/trunks.create", {
      name: "sipp",
      allowed_sources: ["127.0.0.1"],
      outbound_address: `127.0.0.1:${trunkPort}`,
      outbound_username: USER,
      outbound_password: PASSWORD,
    });
    assertEquals(trunk.status, 200, JSON.stringify(trunk.body));
    assertEquals(trunk.body.trunk.outbound_credentials, true);
    assert(!JSON.stringify(trunk.body).includes(PASSWORD), "the password was shown");
    const [stored] = await api.db.sql<{ sealed: string }[]>`
      select outbound_password_sealed::text as sealed from trunks
      where id = ${trunk.body.trunk.trunk_id}`;
    assert(!stored.sealed.includes(PASSWORD), "the password is kept in the clear");
    const number = await api.admin("/api/v1/numbers.create", {
      number: OUR_NUMBER,
      agent_id: tenant.agent_id,
      trunk_id: trunk.body.trunk.trunk_id,
    });
    assertEquals(number.status, 200, JSON.stringify(number.body));

    const ended = (id: string) =>
      eventually(`session ${id} ended`, async () => {
        const [r] = await api.db.sql<
          { status: string; end_reason: string; dial_state: string; direction: string }[]
        >`select status, end_reason, dial_state, direction from sessions where id = ${id}`;
        return r.status === "ended" || r.status === "failed" ? r : undefined;
      }, 30_000).catch((err) => {
        throw new Error(`${err.message}\n${worker!.child.output()}`);
      });
    const dial = async () => {
      const r = await api.post(
        "/api/v1/calls.dial",
        { agent_id: tenant.agent_id, to: CALLEE, from: OUR_NUMBER },
        tenant.sk,
      );
      assertEquals(r.status, 202, JSON.stringify(r.body));
      assertEquals(r.body.status, "dialing");
      return r.body.session_id as string;
    };

    await t.step(
      "a 401 is answered with the sealed credentials; the callee hears the greeting and hangs up",
      async () => {
        const phone = await PhoneCaller.open();
        try {
          const sipp = runSippTrunk(
            challengesThenAnswers("401", USER, PASSWORD, phone.port, 9_000),
            trunkPort,
          );
          await new Promise((r) => setTimeout(r, 300)); // SIPp binds its port
          const t0 = performance.now();
          const id = await dial();
          await phone.start();
          // The greeting waits for the silent callee's 3 s, then plays: seen as RTP at the trunk.
          await eventually(
            "the greeting reached the callee's RTP",
            () => Promise.resolve(loudFrames(phone.audioSince(t0)) > 25 || undefined),
            20_000,
          );
          const run = await sipp;
          assertSippPassed(run); // verifyauth held: the worker's digest used PASSWORD
          assert(/Authorization: Digest username="acme-out"/.test(run.messages), run.messages);
          assertEquals(await ended(id), {
            status: "ended",
            end_reason: "caller_hung_up",
            dial_state: "answered",
            direction: "outbound",
          });
          const got = await api.admin("/api/v1/sessions.get", { session_id: id });
          assertEquals([got.body.direction, got.body.metadata?.phone_to], ["outbound", CALLEE]);
        } finally {
          await phone.close();
        }
      },
    );

    await t.step("a busy callee (486) ends the dialled session ended / busy", async () => {
      const sipp = runSippTrunk(
        refusesWith("486 Busy Here", ["100 Trying", "180 Ringing"]),
        trunkPort,
      );
      await new Promise((r) => setTimeout(r, 300));
      const id = await dial();
      assertSippPassed(await sipp);
      assertEquals(await ended(id), {
        status: "ended",
        end_reason: "busy",
        dial_state: "ringing",
        direction: "outbound",
      });
    });
  } finally {
    await worker?.stop();
    await api.close();
    await served.shutdown();
  }
});
