// Machine detection on outbound calls (issue 34) through a real worker process (local engines,
// SIP_PORT) to a SIPp trunk whose callee's phone (tests/helpers/phone_caller.ts) plays festival's
// voicemail greeting and a beep, or says "Hello?" and waits (tests/helpers/answering_machine.ts).
// Per the dial's machine_detection: hang_up ends a machine's call `machine` with nothing spoken
// (the worker's BYE); leave_message tells the brain machine then beep and speaks only after the
// beep; a person hears the greeting after the hello; off runs no detection. The session is
// reserved and marked outbound as the outbound SIPp test does (calls.dial's part is its own).
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSippTrunk } from "./helpers/sipp.ts";
import { answersThenHangsUp, answersThenIsHungUp } from "./helpers/sipp_trunk.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { sessionLog } from "./helpers/live_call.ts";
import {
  type CalleeAudio,
  personSaysHello,
  ulawOf,
  voicemailWithBeep,
} from "./helpers/answering_machine.ts";
import { type Beep, createBrain, type MachineDetected } from "../sdk/brain/mod.ts";
import { g711Decode } from "../media/phone/g711.ts";
import { rms } from "../caller/wav.ts";

/** When the worker's RTP first carried the bot's voice (a loud 20 ms packet), or undefined. */
const firstVoiceAt = (phone: PhoneCaller, since: number) =>
  phone.heard.find((h) =>
    h.at >= since && h.payloadType === 0 && rms(g711Decode("PCMU", h.payload)) > 500
  )?.at;

Deno.test("an outbound call's machine detection hangs up on a machine, waits for its beep, or greets a person", async (t) => {
  const told = new Map<string, (MachineDetected | Beep)[]>();
  const brain = createBrain({
    onSessionStart: () => "Hello, this is the clinic calling about tomorrow's appointment.",
    onTurn: () => "Thank you.",
    onMachineDetected: (d, s) => void told.set(s.id, [...told.get(s.id) ?? [], d]),
    onBeep: (b, s) => void told.set(s.id, [...told.get(s.id) ?? [], b]),
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
  const sql = service.api.db.sql;
  const [voicemail, hello] = [await voicemailWithBeep(), await personSaysHello()];

  /** Dials a SIPp trunk running `scenario` whose phone plays `audio`; the session row at the end. */
  const call = async (
    scenario: (rtpPort: number) => string,
    machine_detection: string,
    audio: CalleeAudio,
  ) => {
    const phone = await PhoneCaller.open();
    try {
      const trunkPort = await freeUdpPort();
      const sipp = runSippTrunk(scenario(phone.port), trunkPort);
      await new Promise((r) => setTimeout(r, 300)); // SIPp binds its port
      const r = await service.api.post(
        "/api/v1/sessions.connect",
        { agent_id: service.tenant.agent_id },
        service.tenant.sk,
      );
      assertEquals(r.status, 200, JSON.stringify(r.body));
      const id = r.body.session_id as string;
      await sql`update sessions set direction = 'outbound' where id = ${id}`;
      const token = (r.body.webrtc_request_params.headers.Authorization as string).slice(7);
      const dialed = await fetch(`${service.worker.url}/sessions/${id}/dial`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          to: "+15550123",
          from: "+15550100",
          trunk: { trunk_id: "trunk-1", address: `127.0.0.1:${trunkPort}`, transport: "udp" },
          ring_timeout_seconds: 30,
          machine_detection,
        }),
      });
      assertEquals(dialed.status, 202, await dialed.text());
      await phone.start();
      const answeredAt = performance.now();
      await phone.say(ulawOf(audio));
      const run = await sipp;
      assertSippPassed(run);
      let row;
      for (const until = Date.now() + 15_000; Date.now() < until;) {
        row = (await sql<{ status: string; end_reason: string | null }[]>`
          select status, end_reason from sessions where id = ${id}`)[0];
        if (row.status === "ended" || row.status === "failed") break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const log = await sessionLog(sql, id);
      return { id, row, log, phone, answeredAt, told: told.get(id) ?? [] };
    } finally {
      await phone.close();
    }
  };
  const worker = (log: { source: string; kind: string; data: unknown }[], kind: string) =>
    log.filter((e) => e.source === "worker" && e.kind === kind)
      .map((e) => e.data as Record<string, unknown>);

  try {
    await t.step("hang_up: a voicemail ends the call machine, with nothing spoken", async () => {
      const c = await call((p) => answersThenIsHungUp(p), "hang_up", voicemail);
      assertEquals(c.row, { status: "ended", end_reason: "machine" });
      assertEquals(worker(c.log, "machine_detected").map((d) => d.outcome), ["machine"]);
      assertEquals(c.told.map((d) => "outcome" in d ? d.outcome : "beep"), ["machine"]);
      assertEquals(firstVoiceAt(c.phone, c.answeredAt), undefined, "the bot spoke to a machine");
      assertEquals(worker(c.log, "greeting_released"), []);
      assert(c.log.some((e) => e.source === "sip" && e.kind === "bye"), "no BYE was sent");
      // Hung up at the decision, before the greeting ended, let alone the beep.
      const at = Number(worker(c.log, "machine_detected")[0].at_ms);
      assert(at < voicemail.beep!.startMs, `decided at ${at} ms`);
    });

    await t.step(
      "leave_message: the brain hears machine then beep, and speaks after the beep",
      async () => {
        const c = await call((p) => answersThenHangsUp(p, 16_000), "leave_message", voicemail);
        assertEquals(c.row, { status: "ended", end_reason: "caller_hung_up" });
        const [detected, beep] = c.told as [MachineDetected, Beep];
        assertEquals([c.told.length, detected.outcome, beep.heard], [2, "machine", true]);
        // The beep as the worker heard it: its end on the callee's audio time (the answer on).
        const endMs = voicemail.beep!.endMs;
        assert(Math.abs(beep.atMs - endMs) <= 150, `beep ended at ${beep.atMs} ms, not ~${endMs}`);
        assertEquals(worker(c.log, "greeting_released")[0]?.why, "beep");
        const voiced = firstVoiceAt(c.phone, c.answeredAt);
        assert(voiced !== undefined, "no greeting reached the machine");
        assert(
          voiced - c.answeredAt >= endMs,
          `the greeting's RTP began ${Math.round(voiced - c.answeredAt)} ms after the answer, ` +
            `before the beep ended (${endMs} ms)`,
        );
      },
    );

    await t.step("a person's hello: told human, the greeting follows the hello", async () => {
      const c = await call((p) => answersThenHangsUp(p, 10_000), "hang_up", hello);
      assertEquals(c.row, { status: "ended", end_reason: "caller_hung_up" });
      assertEquals(c.told.map((d) => "outcome" in d ? d.outcome : "beep"), ["human"]);
      assertEquals(worker(c.log, "greeting_released")[0]?.why, "human");
      const voiced = firstVoiceAt(c.phone, c.answeredAt);
      assert(voiced !== undefined, "no greeting for the person");
      // After the hello (0.3 s of quiet, under a second of speech) and 1.2 s of quiet: ~2-3 s.
      const after = voiced - c.answeredAt;
      assert(after >= 1500 && after < 4500, `the greeting began ${Math.round(after)} ms in`);
    });

    await t.step(
      "off: no detection runs; the greeting gate's own rule greets the person",
      async () => {
        const c = await call((p) => answersThenHangsUp(p, 8_000), "off", hello);
        assertEquals(c.row, { status: "ended", end_reason: "caller_hung_up" });
        assertEquals(worker(c.log, "machine_detected"), []);
        assertEquals(c.told, []);
        assertEquals(worker(c.log, "greeting_released")[0]?.why, "callee_spoke");
      },
    );
  } finally {
    await service.close();
  }
});
