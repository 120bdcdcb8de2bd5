// The SIP UAS (media/sip/) against a real SIP peer, SIPp 3.6: each scenario fails SIPp's call (exit
// code 1) on any unexpected or missing message, and the UAS's own events say what it did.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  assertSippPassed,
  freeUdpPort,
  freeUdpPortRun,
  runSipp,
  SIPP,
  type SippRun,
} from "./helpers/sipp.ts";
import {
  ackOfRefusal,
  NO_BODY,
  request,
  sdpOffer,
  XML_HEAD as HEAD,
} from "./helpers/sipp_scenario.ts";
import { type CallEvent, SipUas } from "../media/sip/uas.ts";

const KNOWN = "+15550100";
const NUMBERS = new Map([[KNOWN, { agentId: "agent-reception" }]]);

async function withUas(ringingMs: number, run: (port: number) => Promise<SippRun>) {
  const events: CallEvent[] = [];
  const uas = new SipUas({
    host: "127.0.0.1",
    lookup: (dialled) => NUMBERS.get(dialled),
    ringingMs,
    onEvent: (e) => events.push(e),
  });
  const port = await uas.listen();
  try {
    const result = await run(port);
    assertSippPassed(result);
    return { events, uas, result };
  } finally {
    await uas.close();
  }
}

const OFFER = sdpOffer([8, 0, 101], { fmtp: true });
/** A request in the dialog the 200 set up: its To (with the UAS's tag), no Contact, no body. */
const inDialog = (method: string, cseq: number) =>
  request(method, cseq, { to: "[last_To:]", contact: false }) + NO_BODY;

Deno.test("an OPTIONS keep-alive is answered 200 with the methods the UAS allows", async () => {
  await withUas(0, (port) =>
    runSipp(
      `${HEAD}<scenario name="options">
  <send><![CDATA[${request("OPTIONS", 1) + NO_BODY}]]></send>
  <recv response="200">
    <action><ereg regexp="INVITE, ACK, CANCEL, BYE, OPTIONS" search_in="hdr" header="Allow:" check_it="true" assign_to="allow"/></action>
  </recv>
  <Reference variables="allow"/>
</scenario>`,
      port,
      KNOWN,
    ));
});

async function wholeCall(transport: "udp" | "tcp") {
  const { events, uas } = await withUas(100, (port) =>
    runSipp(
      `${HEAD}<scenario name="call">
  <send retrans="500"><![CDATA[${request("INVITE", 1)}${OFFER}]]></send>
  <recv response="100" optional="true"/>
  <recv response="180"/>
  <recv response="200" rtd="true">
    <action><ereg regexp="m=audio [0-9]+ RTP/AVP 8 101" search_in="body" check_it="true" assign_to="m"/></action>
  </recv>
  <send><![CDATA[${inDialog("ACK", 1)}]]></send>
  <pause milliseconds="200"/>
  <send retrans="500"><![CDATA[${inDialog("BYE", 2)}]]></send>
  <recv response="200" crlf="true"/>
  <Reference variables="m"/>
</scenario>`,
      port,
      KNOWN,
      transport,
    ));
  assertEquals(events.map((e) => e.type), ["invited", "answered", "confirmed", "ended"]);
  const [invited, answered, , ended] = events;
  assert(invited.type === "invited" && invited.dialled === KNOWN && invited.caller === "+15550111");
  assert(answered.type === "answered");
  assertEquals(answered.target.agentId, "agent-reception");
  assertEquals([answered.media.codec, answered.media.payloadType, answered.media.dtmfPayloadType], [
    "PCMA",
    8,
    101,
  ]);
  assert(ended.type === "ended" && ended.reason === "caller_hung_up");
  assertEquals(uas.activeCalls, 0);
}

Deno.test("an INVITE is answered 180 then 200 with PCMA and telephone-event, ACKed, and the caller's BYE gets 200", () =>
  wholeCall("udp"));

Deno.test("the same call over one TCP connection, framed by Content-Length", () =>
  wholeCall("tcp"));

Deno.test("a CANCEL before the answer gets 200 and the INVITE 487, and the call ends cancelled", async () => {
  const { events, uas } = await withUas(20_000, (port) =>
    runSipp(
      `${HEAD}<scenario name="cancel">
  <send retrans="500"><![CDATA[${request("INVITE", 1)}${OFFER}]]></send>
  <recv response="100" optional="true"/>
  <recv response="180"/>
  <send><![CDATA[${
        request("CANCEL", 1, { branch: "[branch-3]", contact: false }) + NO_BODY
      }]]></send>
  <recv response="200"/>
  <recv response="487"/>
  <send><![CDATA[${ackOfRefusal(1, 6)}]]></send>
  <pause milliseconds="600"/>
</scenario>`,
      port,
      KNOWN,
    ));
  assertEquals(events.map((e) => e.type), ["invited", "ended"]);
  assert(events[1].type === "ended" && events[1].reason === "caller_cancelled");
  assertEquals(uas.activeCalls, 0);
});

Deno.test("an INVITE for a number the lookup does not know gets 404 and no call", async () => {
  const { events, uas } = await withUas(0, (port) =>
    runSipp(
      `${HEAD}<scenario name="unknown">
  <send retrans="500"><![CDATA[${request("INVITE", 1)}${OFFER}]]></send>
  <recv response="100" optional="true"/>
  <recv response="404"/>
  <send><![CDATA[${ackOfRefusal(1, 3)}]]></send>
  <pause milliseconds="600"/>
</scenario>`,
      port,
      "+15550999",
    ));
  assertEquals(events.map((e) => e.type), ["invited", "refused"]);
  assert(events[1].type === "refused" && events[1].status === 404);
  assertEquals(uas.activeCalls, 0);
});

Deno.test("a malformed request gets 400 naming the fault", async () => {
  const { events, result } = await withUas(0, (port) =>
    runSipp(
      `${HEAD}<scenario name="malformed">
  <send><![CDATA[${
        request("OPTIONS", 1).replace("Max-Forwards: 70", "Max-Forwards: seventy") + NO_BODY
      }]]></send>
  <recv response="400"/>
  <send><![CDATA[${request("OPTIONS", 2)}
      Content-Length: 300
]]></send>
  <recv response="400"/>
</scenario>`,
      port,
      KNOWN,
    ));
  assert(
    result.messages.includes("SIP/2.0 400 Bad Request (Max-Forwards is not a number)"),
    result.messages,
  );
  assert(
    result.messages.includes("SIP/2.0 400 Bad Request (Content-Length is longer than the body)"),
  );
  assertEquals(events, []);
});

Deno.test("50 calls at once are all answered, ACKed and hung up by the caller", async () => {
  const events: CallEvent[] = [];
  let active = 0, peak = 0;
  const uas = new SipUas({
    host: "127.0.0.1",
    lookup: (dialled) => NUMBERS.get(dialled),
    onEvent: (e) => {
      events.push(e);
      if (e.type === "answered") peak = Math.max(peak, ++active);
      if (e.type === "ended") active--;
    },
  });
  const port = await uas.listen();
  try {
    // SIPp's built-in uac: INVITE, 180, 200, ACK, a 3 s hold, BYE; 50 calls started at 100/s,
    // so all 50 are up together.
    const out = await new Deno.Command(SIPP, {
      args: [
        `127.0.0.1:${port}`,
        ...["-sn", "uac", "-s", KNOWN, "-m", "50", "-l", "50", "-r", "100", "-d", "3000"],
        ...[
          "-i",
          "127.0.0.1",
          "-p",
          String(await freeUdpPort()),
          "-mp",
          String(await freeUdpPortRun(4)),
        ],
        ...["-nostdin", "-timeout", "60", "-timeout_error"],
      ],
      stdout: "null",
      stderr: "null",
    }).output();
    assertEquals(out.code, 0);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    assertEquals([count("answered"), count("confirmed"), count("ended")], [50, 50, 50]);
    assertEquals(peak, 50);
    assertEquals(uas.activeCalls, 0);
  } finally {
    await uas.close();
  }
});
