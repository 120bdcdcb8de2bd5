// A warm transfer to an E.164 number (issue 35) rings it through the trunk the call came in on:
// the caller's trunk (SIPp) has an IP-authenticated outbound edge, which is baresip 1.0.0 as the
// person. baresip answers only a Request-URI whose user is its account's, so its answer proves
// the INVITE went to sip:+E164@outbound_address. The whisper reaches the person as speech and,
// the trunk refusing the REFER with Replaces, the caller's 700 Hz reaches them through the bridge.
// The session is put on the trunk as the SIP redirect puts it (sessions.phone_trunk_id); the
// caller's INVITE comes with the session's token straight to the worker, as in the other tests.
import { assert, assertEquals } from "./helpers/assert.ts";
import { connectPhoneSession, startCallService } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import { callerScenario, classify, count, DIALLED, tone } from "./helpers/warm_transfer.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { startBaresipCallee } from "./helpers/baresip_callee.ts";
import { eventually } from "./helpers/live_call.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { g711Encode } from "../media/phone/g711.ts";

const PERSON = "+919876543210";
const WHISPER = "Ravi is calling about his broadband bill. He has paid it twice.";
const CALLER_HZ = 700;

Deno.test("a warm transfer to a number rings it through the trunk the call came in on, whispers, then bridges", async () => {
  const person = await startBaresipCallee(tone(1000, 30), PERSON, { tailSeconds: 0 });
  let ended = "";
  const brain = createBrain({
    onSessionStart(session) {
      setTimeout(() => session.transfer(PERSON, { whisper: WHISPER }), 0);
      return "Let me put you through to billing.";
    },
    onTurn: () => "Sorry?",
    onSessionEnd: (_s, end) => void (ended = end.reason),
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, { workerEnv: { SIP_PORT: String(sipPort) } });
  const caller = await PhoneCaller.open();
  try {
    const trunk = await service.api.admin("/api/v1/trunks.create", {
      name: "jio sbc",
      allowed_sources: ["127.0.0.1"],
      outbound_address: person.address,
    });
    assertEquals(trunk.status, 200, JSON.stringify(trunk.body));
    const { sessionId, token } = await connectPhoneSession(service);
    await service.api.db.sql`update sessions set phone_trunk_id = ${trunk.body.trunk.trunk_id}
      where id = ${sessionId}`;
    const sipp = runSipp(
      callerScenario(token, caller.port, { refuse: "501 Not Implemented" }),
      sipPort,
      DIALLED,
      "udp",
      ["-timeout", "60"],
    );
    await caller.start();
    await eventually(
      "the session to end transferred",
      () => Promise.resolve(ended === "transferred" || undefined),
      40_000,
    );
    await caller.say(g711Encode("PCMU", tone(CALLER_HZ, 1.5)));
    await person.hangup();
    assertSippPassed(await sipp);

    assert(person.events().includes("CALL_ESTABLISHED"), `baresip: ${person.events()}`);
    const { heard } = await person.dumps();
    const atPerson = classify(heard, [CALLER_HZ]);
    assert(count(atPerson, "other") > 40, `the person heard ${count(atPerson, "other")} of speech`);
    assert(
      count(atPerson, CALLER_HZ) > 25,
      `the caller reached the person in ${count(atPerson, CALLER_HZ)}`,
    );

    const sip = await eventually("the bridge in the log", async () => {
      // deno-lint-ignore no-explicit-any
      const log = (await service.log(sessionId)).filter((e: any) => e.source === "sip");
      return log.some((e) => e.kind === "bridged") ? log : undefined;
    }, 10_000);
    const dial = sip.find((e) => e.kind === "warm_dial")!.data as { target: string; uri: string };
    assertEquals(dial.target, PERSON);
    assertEquals(dial.uri, `sip:${PERSON}@${person.address}`);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${person.output().slice(-3000)}`);
  } finally {
    await caller.close();
    await person.close();
    await service.close();
  }
});
