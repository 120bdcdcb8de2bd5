// A warm transfer (issue 35) that does not reach a person, through a real worker process (local
// engines) and a real brain (the TypeScript SDK): SIPp is the caller's trunk, and two SIPp user
// agents are the people: one busy (486), one ringing until the worker's CANCEL at the brain's
// 5 s ring timeout (487). Each time the caller comes off hold back to the brain, which is told
// why (TransferFailed.reason), and the caller then hears the bot again.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { connectPhoneSession, startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp, runSippTrunk } from "./helpers/sipp.ts";
import { refusesWith, ringsUntilCancelled } from "./helpers/sipp_trunk.ts";
import { eventually } from "./helpers/live_call.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { callerScenario, classify, count, DIALLED } from "./helpers/warm_transfer.ts";
import { createBrain, type TransferFailure } from "../sdk/brain/mod.ts";
import { HOLD_NOTES_HZ } from "../media/phone/hold_audio.ts";

const WHISPER = "Ravi wants to change his delivery address.";
const SORRY = "Sorry, nobody is free to take your call right now. Can I take a message?";

Deno.test("a warm transfer to a person who is busy, then to one who does not answer, gives the caller back to the brain with each reason", async () => {
  const [busyPort, ringPort] = [await freeUdpPort(), await freeUdpPort()];
  const failures: TransferFailure[] = [];
  let ended = "";
  const brain = createBrain({
    onSessionStart(session) {
      setTimeout(() => session.transfer(`sip:desk@127.0.0.1:${busyPort}`, { whisper: WHISPER }), 0);
      return "Let me find someone for you.";
    },
    onTurn: () => "Sorry?",
    onTransferFailed(failure, session) {
      failures.push(failure);
      if (failures.length === 1) {
        session.transfer(`sip:desk@127.0.0.1:${ringPort}`, {
          whisper: WHISPER,
          ringTimeoutMs: 5000,
        });
      } else session.say(SORRY);
    },
    // The apology was heard to its end: the brain hangs up (the caller's BYE ends the test).
    onHeard(heard, session) {
      if (heard.text.startsWith("Sorry, nobody") && !heard.cutOff) session.end("no_one_free");
    },
    onSessionEnd: (_s, end) => void (ended = end.reason),
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
  const caller = await PhoneCaller.open();
  try {
    const busy = runSippTrunk(
      refusesWith("486 Busy Here", ["100 Trying", "180 Ringing"]),
      busyPort,
    );
    const ringing = runSippTrunk(ringsUntilCancelled(), ringPort);
    const { sessionId, token } = await connectPhoneSession(service);
    const sipp = runSipp(
      callerScenario(token, caller.port),
      sipPort,
      DIALLED,
      "udp",
      [
        "-timeout",
        "60",
      ],
    );
    await caller.start();
    assertSippPassed(await busy);
    assertSippPassed(await ringing);
    assertSippPassed(await sipp);

    assertEquals(failures.map((f) => f.reason), ["busy", "no_answer"]);
    assertMatch(failures[0].detail, /486 Busy Here/);
    assertMatch(failures[1].detail, /did not answer within 5000 ms/);
    await eventually("the brain's End", () => Promise.resolve(ended || undefined), 10_000);
    assertEquals(ended, "brain_ended");

    // Greeting, hold, (hold again), then the bot's apology: speech after the last hold frame.
    const heard = classify(caller.audioSince(0), [...HOLD_NOTES_HZ]);
    const isHold = (c: number | "other") => c !== "other";
    const lastHold = heard.findLastIndex(isHold);
    assert(heard.filter(isHold).length > 20, "the caller was not on hold");
    assert(count(heard.slice(lastHold), "other") > 40, "the caller did not hear the bot again");

    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "brain_ended");
    // deno-lint-ignore no-explicit-any
    const kinds = record.log.filter((e: any) => e.source === "sip").map((e: any) => e.kind);
    assertEquals(kinds.filter((k: string) => k === "warm_failed").length, 2);
    assertEquals(kinds.filter((k: string) => k === "hold").length, 4, `${kinds}`);
  } finally {
    await caller.close();
    await service.close();
  }
});
