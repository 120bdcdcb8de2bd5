// A warm transfer (issue 35) joined by the caller's trunk: after the whisper the worker sends a
// REFER whose Refer-To is the person's contact with a Replaces header naming the worker's call to
// them (RFC 3891, RFC 5589 section 7). SIPp plays a trunk that takes it (202, then a NOTIFY of
// 200 as if it had called the person in the worker's place); the worker then leaves both calls:
// a BYE to the caller's trunk and one to the person (baresip), and the session ends transferred.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { connectPhoneSession, startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { startBaresipCallee } from "./helpers/baresip_callee.ts";
import { eventually } from "./helpers/live_call.ts";
import { callerScenario, classify, count, DIALLED } from "./helpers/warm_transfer.ts";
import { createBrain } from "../sdk/brain/mod.ts";

const WHISPER = "Meera has a question about her invoice.";

Deno.test("a warm transfer is joined by a REFER with Replaces where the trunk takes it, and the worker leaves both calls", async () => {
  const person = await startBaresipCallee(new Int16Array(8000), "desk", { tailSeconds: 60 });
  let ended = "";
  const brain = createBrain({
    onSessionStart(session) {
      setTimeout(() => session.transfer(`sip:desk@${person.address}`, { whisper: WHISPER }), 0);
      return "One moment please.";
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
      callerScenario(token, caller.port, "accept"),
      sipPort,
      DIALLED,
      "udp",
      ["-timeout", "60"],
    );
    await caller.start();
    assertSippPassed(await sipp);
    // The worker hung up on the person too: baresip's call is closed without the test's hangup.
    await person.closed(10_000);
    await eventually("the brain's End", () => Promise.resolve(ended || undefined), 10_000);
    assertEquals(ended, "transferred");

    const { heard } = await person.dumps();
    assert(count(classify(heard, []), "other") > 25, "the person did not hear the whisper");

    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "transferred");
    // deno-lint-ignore no-explicit-any
    const sip = record.log.filter((e: any) => e.source === "sip");
    // deno-lint-ignore no-explicit-any
    const referTo = sip.find((e: any) => e.kind === "refer").data.refer_to as string;
    // The person's contact (baresip's own user part), and the worker's dialog with them as they
    // see it (RFC 3891 section 3).
    const warmDial = sip.find((e: { kind: string }) => e.kind === "warm_dial").data;
    assertMatch(referTo, new RegExp(`^sip:desk[^@]*@${person.address.replace(/\./g, "\\.")}\\?`));
    const replaces = decodeURIComponent(referTo.split("?Replaces=")[1]);
    assertMatch(replaces, /;to-tag=[^;]+;from-tag=[^;]+$/);
    assertEquals(replaces.split(";")[0], warmDial.call_id);
    // deno-lint-ignore no-explicit-any
    assertEquals(sip.find((e: any) => e.kind === "refer_outcome").data.ok, true);
    // deno-lint-ignore no-explicit-any
    assert(!sip.some((e: any) => e.kind === "bridged"), "bridged though the trunk took the REFER");
  } finally {
    await caller.close();
    await person.close();
    await service.close();
  }
});
