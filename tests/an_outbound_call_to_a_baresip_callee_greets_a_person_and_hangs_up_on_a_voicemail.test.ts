// Issue 34 against a real softphone: POST /api/v1/calls.dial on the real API → a real worker
// process (local engines, SIP) → baresip 1.0.0 as the callee (tests/helpers/baresip_callee.ts),
// the trunk's outbound_address being baresip's own loopback port. baresip auto-answers, plays a
// WAV (a person's "Hello?" or festival's voicemail greeting and beep, answering_machine.ts) and
// dumps what it hears. Checked in what baresip recorded, not in the worker's own account: a person
// hears the greeting after the hello; a voicemail under hang_up hears nothing and is hung up on
// (`machine`); under leave_message the greeting is recorded after the beep. The test hangs up
// through baresip's ctrl_tcp once the session log says the greeting was spoken out, so no step
// waits on a guessed time.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { freeUdpPort } from "./helpers/sipp.ts";
import { eventually, sessionLog } from "./helpers/live_call.ts";
import { type BaresipCallee, startBaresipCallee } from "./helpers/baresip_callee.ts";
import { personSaysHello, voicemailWithBeep } from "./helpers/answering_machine.ts";
import { type Beep, createBrain, type MachineDetected } from "../sdk/brain/mod.ts";
import { rms } from "../caller/wav.ts";

const CALLEE = "+442071838750";
const GREETING = "Hello, this is the clinic calling about tomorrow's appointment.";

/** Per 20 ms frame of 8 kHz audio: louder than `level`? */
function loudFrames(pcm: Int16Array, level = 500): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i + 160 <= pcm.length; i += 160) out.push(rms(pcm, i, i + 160) > level);
  return out;
}
const count = (frames: boolean[]) => frames.filter(Boolean).length;

Deno.test("an outbound call to a baresip callee greets a person, hangs up on a voicemail, or speaks after its beep", async (t) => {
  const told = new Map<string, (MachineDetected | Beep)[]>();
  const brain = createBrain({
    onSessionStart: () => GREETING,
    onTurn: () => "Thank you.",
    onMachineDetected: (d, s) => void told.set(s.id, [...told.get(s.id) ?? [], d]),
    onBeep: (b, s) => void told.set(s.id, [...told.get(s.id) ?? [], b]),
  });
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({}, { node: false });
  let worker: WorkerProcess | undefined;
  const [voicemail, hello] = [await voicemailWithBeep(), await personSaysHello(0)];
  try {
    worker = await startWorkerProcess(api.db.url, undefined, {
      SIP_PORT: String(await freeUdpPort()),
      RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "recordings-" }),
    });
    const tenant = await makeTenant(api, "acme", { brain_url: served.url });
    const sql = api.db.sql;

    /** A trunk to `callee`'s port and our number on it (a number has one trunk: one per step). */
    const trunkTo = async (callee: BaresipCallee, number: string) => {
      const trunk = await api.admin("/api/v1/trunks.create", {
        name: `baresip-${number}`,
        allowed_sources: ["127.0.0.1"],
        outbound_address: callee.address,
      });
      assertEquals(trunk.status, 200, JSON.stringify(trunk.body));
      const added = await api.admin("/api/v1/numbers.create", {
        number,
        agent_id: tenant.agent_id,
        trunk_id: trunk.body.trunk.trunk_id,
      });
      assertEquals(added.status, 200, JSON.stringify(added.body));
    };
    const dial = async (from: string, machine_detection: string) => {
      const r = await api.post(
        "/api/v1/calls.dial",
        { agent_id: tenant.agent_id, to: CALLEE, from, machine_detection },
        tenant.sk,
      );
      assertEquals(r.status, 202, JSON.stringify(r.body));
      return r.body.session_id as string;
    };
    const ended = (id: string) =>
      eventually(`session ${id} ended`, async () => {
        const [r] = await sql<{ status: string; end_reason: string; dial_state: string }[]>`
          select status, end_reason, dial_state from sessions where id = ${id}`;
        return r.status === "ended" || r.status === "failed" ? r : undefined;
      }, 60_000).catch((err) => {
        throw new Error(`${err.message}\n${worker!.child.output()}`);
      });
    const worker_ = async (id: string, kind: string) =>
      (await sessionLog(sql, id)).filter((e) => e.source === "worker" && e.kind === kind)
        .map((e) => e.data as Record<string, unknown>);
    /** Waits until the brain's greeting was spoken out on the line (a completed bot unit). */
    const greetingSpoken = (id: string) =>
      eventually("the greeting spoken out", async () => {
        const log = await sessionLog(sql, id);
        return log.find((e) =>
          e.source === "phone" && e.kind === "bot-output" &&
          (e.data as { spoken_status?: string }).spoken_status === "completed"
        );
      }, 60_000);

    await t.step(
      "a person's hello: told human, baresip records the greeting after it",
      async () => {
        const callee = await startBaresipCallee(hello.pcm8k, CALLEE);
        try {
          const from = "+14155550101";
          await trunkTo(callee, from);
          const id = await dial(from, "hang_up");
          await greetingSpoken(id);
          // The last RTP of the unit is still in flight when its completion is logged.
          await new Promise((r) => setTimeout(r, 1000));
          await callee.hangup();
          await callee.closed();
          assertEquals(await ended(id), {
            status: "ended",
            end_reason: "caller_hung_up",
            dial_state: "answered",
          });
          assertEquals((told.get(id) ?? []).map((d) => "outcome" in d ? d.outcome : "beep"), [
            "human",
          ]);
          assertEquals((await worker_(id, "greeting_released"))[0]?.why, "human");
          const { heard, sent } = await callee.dumps();
          const spoke = loudFrames(sent), greeting = loudFrames(heard);
          const helloEnd = spoke.lastIndexOf(true);
          assert(helloEnd > 0, "baresip sent no hello");
          const first = greeting.indexOf(true);
          assert(
            first > helloEnd,
            `the greeting began at frame ${first}, the hello ended at ${helloEnd}`,
          );
          // The greeting is about 4 s of festival speech: 200 frames, most of them voiced.
          assert(count(greeting) > 60, `baresip heard ${count(greeting)} loud frames of greeting`);
          console.log(JSON.stringify({ helloEnd, first, loud: count(greeting) }));
        } finally {
          await callee.close();
        }
      },
    );

    await t.step("hang_up: a voicemail is hung up on (machine) and hears nothing", async () => {
      const callee = await startBaresipCallee(voicemail.pcm8k, CALLEE);
      try {
        const from = "+14155550102";
        await trunkTo(callee, from);
        const id = await dial(from, "hang_up");
        // The worker's BYE ends baresip's call.
        await callee.closed();
        assertEquals(await ended(id), {
          status: "ended",
          end_reason: "machine",
          dial_state: "answered",
        });
        assertEquals((told.get(id) ?? []).map((d) => "outcome" in d ? d.outcome : "beep"), [
          "machine",
        ]);
        assertEquals(await worker_(id, "greeting_released"), []);
        const { heard, sent } = await callee.dumps();
        assert(count(loudFrames(sent)) > 50, "baresip sent no voicemail greeting");
        assert(heard.length > 8000, `baresip's dump of the call holds ${heard.length} samples`);
        assertEquals(count(loudFrames(heard)), 0, "baresip heard the bot speak to a machine");
      } finally {
        await callee.close();
      }
    });

    await t.step("leave_message: baresip records the greeting after its beep", async () => {
      const callee = await startBaresipCallee(voicemail.pcm8k, CALLEE);
      try {
        const from = "+14155550103";
        await trunkTo(callee, from);
        const id = await dial(from, "leave_message");
        await greetingSpoken(id);
        await new Promise((r) => setTimeout(r, 1000));
        await callee.hangup();
        await callee.closed();
        assertEquals(await ended(id), {
          status: "ended",
          end_reason: "caller_hung_up",
          dial_state: "answered",
        });
        assertEquals((told.get(id) ?? []).map((d) => "outcome" in d ? d.outcome : "beep"), [
          "machine",
          "beep",
        ]);
        assertEquals((await worker_(id, "greeting_released"))[0]?.why, "beep");
        const { heard, sent } = await callee.dumps();
        const spoke = loudFrames(sent), greeting = loudFrames(heard);
        // The beep is the last loud audio baresip sent; the bot's first loud frame comes after.
        const beepEnd = spoke.lastIndexOf(true);
        assert(
          beepEnd * 20 >= voicemail.beep!.startMs,
          `baresip's audio ended at frame ${beepEnd}`,
        );
        const first = greeting.indexOf(true);
        assert(
          first > beepEnd,
          `the greeting began at frame ${first}, the beep ended at ${beepEnd}`,
        );
        assert(count(greeting) > 60, `baresip heard ${count(greeting)} loud frames of greeting`);
        console.log(JSON.stringify({ beepEnd, first, loud: count(greeting) }));
      } finally {
        await callee.close();
      }
    });
  } finally {
    await worker?.stop();
    await api.close();
    await served.shutdown();
  }
});
