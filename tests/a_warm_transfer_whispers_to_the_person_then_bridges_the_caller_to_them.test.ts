// A warm transfer (issue 35) through a real worker process (local engines) and a real brain (the
// TypeScript SDK): SIPp is the caller's trunk and a UDP socket its phone's media; baresip 1.0.0
// is the person, reached at its sip: URI by the worker's own UAC. baresip's microphone is a
// steady 1 kHz tone and the caller sends 700 Hz once joined, so each direction of the bridge is
// told apart in what the other end received; the hold chime is 440 and 554 Hz; the whisper is
// speech (no single tone). The caller's trunk refuses the worker's REFER with Replaces (501), as
// most trunks do, so the worker bridges. Checked in what baresip and the caller's socket received.
import { assert, assertEquals } from "./helpers/assert.ts";
import { connectPhoneSession, startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import {
  callerScenario,
  classify,
  count,
  DIALLED,
  longestRun,
  tone,
} from "./helpers/warm_transfer.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { startBaresipCallee } from "./helpers/baresip_callee.ts";
import { eventually } from "./helpers/live_call.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { g711Encode } from "../media/phone/g711.ts";
import { HOLD_NOTES_HZ } from "../media/phone/hold_audio.ts";

const WHISPER = "Priya is calling about a refund for order four two seven. She is upset.";
const PERSON_HZ = 1000;
const CALLER_HZ = 700;

Deno.test("a warm transfer whispers to the person only, holds the caller meanwhile, then bridges the two both ways when the trunk refuses REFER", async () => {
  const person = await startBaresipCallee(tone(PERSON_HZ, 30), "desk", { tailSeconds: 0 });
  let bridged = false;
  let ended = "";
  const brain = createBrain({
    onSessionStart(session) {
      // The worker lets the greeting play out, then holds the caller and rings the person.
      setTimeout(() => session.transfer(`sip:desk@${person.address}`, { whisper: WHISPER }), 0);
      return "Let me put you through to our refunds desk.";
    },
    onTurn: () => "Sorry?",
    onSessionEnd: (_s, end) => void (ended = end.reason),
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
  const caller = await PhoneCaller.open();
  try {
    const { sessionId, token } = await connectPhoneSession(service);
    const sipp = runSipp(
      callerScenario(token, caller.port, { refuse: "501 Not Implemented" }),
      sipPort,
      DIALLED,
      "udp",
      [
        "-timeout",
        "90",
      ],
    );
    await caller.start();
    // The join ends the brain's session "transferred"; the call itself goes on, bridged.
    await eventually(
      "the session to end transferred",
      () => Promise.resolve(ended === "transferred" || undefined),
      40_000,
    );
    bridged = true;
    // The caller talks to the person now: their audio must arrive at baresip.
    await caller.say(g711Encode("PCMU", tone(CALLER_HZ, 1.5)));
    await person.hangup();
    const run = await sipp;
    assertSippPassed(run);

    const { heard } = await person.dumps();
    const atPerson = classify(heard, [CALLER_HZ, PERSON_HZ, ...HOLD_NOTES_HZ]);
    // The whisper reached the person as speech, and the caller's audio reached them once joined.
    assert(
      count(atPerson, "other") > 40,
      `the person heard ${count(atPerson, "other")} frames of speech`,
    );
    assert(
      count(atPerson, CALLER_HZ) > 25,
      `the caller reached the person in ${count(atPerson, CALLER_HZ)} frames`,
    );
    // A vowel may match a note for a frame or two; the chime's notes last 20 frames each.
    for (const hz of HOLD_NOTES_HZ) {
      assert(longestRun(atPerson, hz) < 5, `the person heard the hold chime's ${hz} Hz`);
    }

    const atCaller = classify(caller.audioSince(0), [...HOLD_NOTES_HZ, PERSON_HZ]);
    const firstHold = atCaller.findIndex((c) => c === HOLD_NOTES_HZ[0] || c === HOLD_NOTES_HZ[1]);
    assert(firstHold > 0, "the caller never heard the hold chime");
    const greeting = atCaller.slice(0, firstHold);
    const after = atCaller.slice(firstHold);
    assert(count(greeting, "other") > 25, "the caller did not hear the greeting first");
    assert(
      count(after, HOLD_NOTES_HZ[0]) + count(after, HOLD_NOTES_HZ[1]) > 20,
      "too little hold audio",
    );
    // From the hold on, nothing the caller heard was speech: the whisper never reached them.
    // (A note's first or last frame, part tone and part quiet, is no single tone: one at a time.)
    assert(
      longestRun(after, "other") <= 2,
      `the caller heard ${longestRun(after, "other")} frames of speech in a row on hold`,
    );
    assert(
      count(after, PERSON_HZ) > 25,
      `the person reached the caller in ${count(after, PERSON_HZ)} frames`,
    );

    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "transferred");
    const sip = await eventually("the bridge's end in the log", async () => {
      // deno-lint-ignore no-explicit-any
      const log = (await service.log(sessionId)).filter((e: any) => e.source === "sip");
      return log.some((e) => e.kind === "bridge_ended") ? log : undefined;
    }, 10_000);
    const kinds = sip.map((e) => e.kind);
    const expected = ["hold", "warm_dial", "warm_answered", "whisper_played", "refer", "bridged"];
    for (const k of [...expected, "bridge_ended"]) {
      assert(kinds.includes(k), `no sip/${k} in ${kinds}`);
    }
    const refer = sip.find((e) => e.kind === "refer_outcome")!.data;
    assertEquals(refer, { ok: false, detail: "REFER answered 501 Not Implemented" });
    const end = sip.find((e) => e.kind === "bridge_ended")!.data as {
      by: string;
      bridged_ms: number;
    };
    assertEquals(end.by, "person");
    assert(end.bridged_ms > 1000, JSON.stringify(end));
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\nbridged: ${bridged}\n${person.output().slice(-3000)}`,
    );
  } finally {
    await caller.close();
    await person.close();
    await service.close();
  }
});
