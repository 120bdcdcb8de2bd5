// A trunk that vanished mid-call never answers the worker's BYE. The call ends when the worker
// decides it ends (no RTP for RTP_TIMEOUT_SECONDS, the brain's EndSession, a transfer the trunk
// accepted): the session is `ended` with its reason, its usage counted to then, while the BYE's
// own transaction goes on by itself and gives up at Timer F (64·T1 = 32 s), noted afterwards as
// `bye_answered` "timeout". Before the fix the session stayed `active` until Timer F.
// A real worker process (local engines), a brain on the TypeScript SDK, SIPp 3.6 as the trunk.
import { assert, assertEquals } from "./helpers/assert.ts";
import { type LogEntry, startCallService, waitForLog } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import { answerWorker, request, sdpOffer, XML_HEAD } from "./helpers/sipp_scenario.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { createBrain } from "../sdk/brain/mod.ts";

const DIALLED = "+15550100";
const AT = `sip:${DIALLED}@[remote_ip]:[remote_port]`;
const TO_WORKER = `To: <${AT}>;tag=[$wtag]`;

/** INVITE with the token, the 200 (its To tag kept as $wtag), ACK. */
const answered = (token: string, rtpPort: number) => `
  <send retrans="500"><![CDATA[${
  request("INVITE", 1, { uri: `${AT};session=${token}`, to: `To: <${AT}>` })
}${
  sdpOffer([0, 101], { port: rtpPort, address: "127.0.0.1", fmtp: true, direction: "sendrecv" })
}]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="to,wtag"/></action>
  </recv>
  <Reference variables="to"/>
  <send><![CDATA[${request("ACK", 1, { uri: AT, to: TO_WORKER, contact: false })}
      Content-Length: 0
]]></send>`;

/** The trunk takes the REFER (202), reports the transfer done (NOTIFY 200). */
const transferTaken = `
  <recv request="REFER" timeout="60000"/>${answerWorker("202 Accepted")}
  <send retrans="500"><![CDATA[${
  request("NOTIFY", 2, {
    uri: AT,
    to: TO_WORKER,
    extra: "\n      Event: refer\n      Subscription-State: terminated;reason=noresource" +
      "\n      Content-Type: message/sipfrag",
  })
}
      Content-Length: [len]

SIP/2.0 200 OK
]]></send>
  <recv response="200"/>`;

/** The BYE arrives and the trunk is gone: nothing answers it (the scenario ends there). */
const vanishes = `
  <recv request="BYE" timeout="60000"/>
</scenario>`;

type Then = "nothing" | "end" | "transfer";

Deno.test("the worker's BYE left unanswered does not hold the session: media timeout, brain hang-up and transfer all end at once", async () => {
  const brain = createBrain({
    onSessionStart(session) {
      const then = session.init.then as Then;
      if (then === "end") setTimeout(() => session.end("done"), 0);
      if (then === "transfer") setTimeout(() => session.transfer("tel:+14155550199"), 0);
      return "Hello.";
    },
    onTurn: () => "Yes.",
  });
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, {
    workerEnv: { SIP_PORT: String(sipPort), RTP_TIMEOUT_SECONDS: "3" },
  });
  const callers: PhoneCaller[] = [];
  try {
    const call = async (then: Then) => {
      const connect = await service.api.post(
        "/api/v1/sessions.connect",
        { agent_id: service.tenant.agent_id, init: { then } },
        service.tenant.sk,
      );
      assertEquals(connect.status, 200);
      const token = connect.body.webrtc_request_params.headers.Authorization.slice(7);
      const caller = await PhoneCaller.open();
      callers.push(caller);
      const scenario = `${XML_HEAD}<scenario name="${then}">${answered(token, caller.port)}${
        then === "transfer" ? transferTaken : ""
      }${vanishes}`;
      const sipp = runSipp(scenario, sipPort, DIALLED, "udp", ["-timeout", "90"]);
      // The vanished trunk sends no RTP; the others keep their media up until the worker's BYE.
      if (then !== "nothing") await caller.start();
      assertSippPassed(await sipp);
      return connect.body.session_id as string;
    };
    const sessions = await Promise.all(
      (["nothing", "end", "transfer"] as Then[]).map(async (then) => [then, await call(then)]),
    );
    const expected: Record<Then, string> = {
      nothing: "media_timeout",
      end: "brain_ended",
      transfer: "transferred",
    };
    for (const [then, sessionId] of sessions) {
      const record = await service.record(sessionId, "ended", 20_000);
      assertEquals(record.end_reason, expected[then as Then]);
      // The BYE is given up at Timer F after the session ended, not before it.
      const byeAnswered = await waitForLog(
        service,
        sessionId,
        (e) => e.source === "sip" && e.kind === "bye_answered",
        60_000,
      );
      assertEquals(byeAnswered.data.answer, "timeout");
      const endedAt = Date.parse(record.timings.ended_at);
      const bye = record.log.find((e: LogEntry) => e.source === "sip" && e.kind === "bye");
      assert(bye, `no sip/bye in the ${then} call's log`);
      assert(
        endedAt < Date.parse(byeAnswered.at),
        `${then}: the session ended at ${record.timings.ended_at}, the BYE gave up at ${byeAnswered.at}`,
      );
      // For the report (not asserted): seconds from the BYE to the end, and the usage.
      console.log(JSON.stringify({
        then,
        bye_to_ended_s: (endedAt - Date.parse(bye.at)) / 1000,
        call_seconds: record.usage.call_seconds,
      }));
    }
  } finally {
    for (const c of callers) await c.close();
    await service.close();
  }
});
