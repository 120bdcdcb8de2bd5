// Whole phone calls over SIP through a real worker process (local engines) and a real brain (the
// TypeScript SDK): SIPp 3.6 does the signalling, dialling the worker with the session token in
// the Request-URI as the control plane's 302 hands it out; a UDP socket beside it is the phone's
// media (festival speech as μ-law RTP encoded by sox, RFC 4733 key presses, the bot's RTP kept).
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService, waitForLog } from "./helpers/call_harness.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import {
  ackOfRefusal,
  answerWorker,
  NO_BODY,
  request,
  sdp,
  sdpOffer,
  XML_HEAD as HEAD,
} from "./helpers/sipp_scenario.ts";
import { PhoneCaller, ulawSpeech } from "./helpers/phone_caller.ts";
import { createBrain, type PhoneInfo } from "../sdk/brain/mod.ts";
import { rms } from "../caller/wav.ts";
import { wordErrorRate } from "../media/stt/wer.ts";

const SENTENCE = "i am looking for a cheap hotel near the airport";
const DIALLED = "+15550100";
const CALLER = "+15550111";
const SIPP_LONG = ["-timeout", "150"]; // a whole call with speech runs longer than the default 30 s

/** Requests go to the dialled number (the Request-URI user) from CALLER. */
const AT = `sip:${DIALLED}@[remote_ip]:[remote_port]`;
/** The worker's To, with the tag its 200 gave (kept as $wtag by invite()). */
const TO_WORKER = `To: <${AT}>;tag=[$wtag]`;

/** The first INVITE, with the session token in the Request-URI as the 302 hands it out. */
const firstInvite = (token: string, rtpPort: number) =>
  request("INVITE", 1, { uri: `${AT};session=${token}`, caller: CALLER, to: `To: <${AT}>` }) +
  sdpOffer([0, 101], { port: rtpPort, address: "127.0.0.1", fmtp: true, direction: "sendrecv" });

const invite = (token: string, rtpPort: number) => `
  <send retrans="500"><![CDATA[${firstInvite(token, rtpPort)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="to,wtag"/></action>
  </recv>
  <Reference variables="to"/>${ack(1)}`;

const ack = (cseq: number) => `
  <send><![CDATA[${
  request("ACK", cseq, { uri: AT, caller: CALLER, to: TO_WORKER, contact: false }) + NO_BODY
}]]></send>`;

/** The phone's offer: PCMU and telephone-event at `rtpPort`; `direction` for a hold. */
const offerSdp = (rtpPort: number, direction = "sendrecv") =>
  sdp([0, 101], { port: rtpPort, address: "127.0.0.1", fmtp: true, direction });

const answer = answerWorker; // SIPp answers a request the worker sent

const inDialog = (method: string, cseq: number, extra = "", body = "") => `
  <send retrans="500"><![CDATA[${
  request(method, cseq, { uri: AT, caller: CALLER, to: TO_WORKER, extra })
}
      Content-Length: [len]

${body}]]></send>`;

/** An INVITE answered `status` with `phrase` in the answer, its ACK, then `pauseMs` of quiet. */
const refusal = (
  name: string,
  token: string,
  rtpPort: number,
  refused: { status: number; phrase: string; pauseMs: number },
) =>
  `${HEAD}<scenario name="${name}">
  <send retrans="500"><![CDATA[${firstInvite(token, rtpPort)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="${refused.status}">
    <action><ereg regexp="${refused.phrase}" search_in="msg" check_it="true" assign_to="why"/></action>
  </recv>
  <Reference variables="why"/>
  <send><![CDATA[${ackOfRefusal(1, 3, { uri: AT, caller: CALLER })}]]></send>
  <pause milliseconds="${refused.pauseMs}"/>
</scenario>`;
const tokenOf = (connect: { webrtc_request_params: { headers: { Authorization: string } } }) =>
  connect.webrtc_request_params.headers.Authorization.replace(/^Bearer /, "");

async function until<T>(what: string, get: () => T | undefined | false, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** 20 ms frames of 8 kHz audio louder than `level`. */
const loudFrames = (pcm: Int16Array, level = 500) => {
  let n = 0;
  for (let i = 0; i + 160 <= pcm.length; i += 160) if (rms(pcm, i, i + 160) > level) n++;
  return n;
};

interface Seen {
  phone?: PhoneInfo | null;
  turns: string[];
  digits: string[];
  transferFailures: string[];
  /** The Heard of the greeting came: the worker played it out. */
  greetingHeard?: boolean;
  /** Turn ids whose reply the caller heard to its end. */
  repliesHeard: string[];
  end?: string;
}

function phoneBrain(options: { transferTo?: string } = {}) {
  const seen: Seen = { turns: [], digits: [], transferFailures: [], repliesHeard: [] };
  const brain = createBrain({
    onSessionStart(session) {
      seen.phone = session.phone;
      if (options.transferTo) {
        // Sent after the greeting: the worker lets the greeting play out, then REFERs.
        setTimeout(() => session.transfer(options.transferTo!), 0);
        return "Putting you through to the front desk.";
      }
      return "Hello, this is the hotel desk. How can I help?";
    },
    onTurn: (turn) => {
      seen.turns.push(turn.text);
      return "We have three hotels near the airport.";
    },
    onDtmf(dtmf, session) {
      seen.digits.push(dtmf.digit);
      if (dtmf.digit === "#") session.end("caller_pressed_hash");
    },
    onTransferFailed: (f) => void seen.transferFailures.push(f.detail),
    onHeard: (heard) => {
      if (heard.turnId === "greeting") seen.greetingHeard = true;
      else seen.repliesHeard.push(heard.turnId);
    },
    onSessionEnd: (_s, end) => void (seen.end = end.reason),
  });
  return { brain, seen };
}

// deno-lint-ignore no-explicit-any
const sipLog = (record: any) =>
  record.log.filter((e: { source: string }) => e.source === "sip").map((e: { kind: string }) =>
    e.kind
  );

/**
 * A worker process taking SIP on a free port (the call service around it), a phone caller's RTP
 * socket, and connect for a session of the service's agent.
 */
async function sipCallService(
  brainOptions: { transferTo?: string } = {},
  options: { record_by_default?: boolean } = {},
) {
  const { brain, seen } = phoneBrain(brainOptions);
  const sipPort = await freeUdpPort();
  const service = await startCallService(brain, {
    ...options,
    workerEnv: { SIP_PORT: String(sipPort) },
  });
  const caller = await PhoneCaller.open();
  const connectOne = () =>
    service.api.post(
      "/api/v1/sessions.connect",
      { agent_id: service.tenant.agent_id },
      service.tenant.sk,
    );
  const close = async () => {
    await caller.close();
    await service.close();
  };
  return { seen, sipPort, service, caller, connectOne, close };
}

Deno.test("a SIP call hears the greeting, its spoken turn reaches the brain, keys arrive as DTMF and the brain's hang-up is a BYE", async () => {
  const { seen, sipPort, service, caller, connectOne, close } = await sipCallService();
  try {
    const connect = await connectOne();
    assertEquals(connect.status, 200);
    const sessionId = connect.body.session_id;
    const scenario = `${HEAD}<scenario name="phone-call">${
      invite(tokenOf(connect.body), caller.port)
    }
  <recv request="BYE" timeout="120000"/>${answer()}
</scenario>`;
    const sipp = runSipp(scenario, sipPort, DIALLED, "udp", SIPP_LONG);
    const t0 = performance.now();
    await caller.start();

    // The greeting is heard as speech at the phone, and played out (its Heard reached the brain):
    // the caller speaks after it, not over it (that would be a barge-in).
    await until("the greeting's audio", () => loudFrames(caller.audioSince(t0)) > 25);
    await until("the greeting played out", () => seen.greetingHeard);
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(seen.phone, {
      from: CALLER,
      to: DIALLED,
      carrier: "sip",
      callId: seen.phone!.callId,
      direction: "inbound",
      machineDetection: null,
    });
    assert(seen.phone!.callId.length > 0);

    // The caller speaks; recognition of the 8 kHz phone audio gives the brain a turn close to it.
    const speech = await ulawSpeech(SENTENCE);
    const saidAt = performance.now();
    await caller.say(speech);
    const first = await until("the caller's turn at the brain", () => seen.turns[0]);
    await until("the reply's audio", () => loudFrames(caller.audioSince(saidAt + 1000)) > 25);
    await until("the reply played out", () => seen.repliesHeard.length > 0);
    await new Promise((r) => setTimeout(r, 300));
    // Said twice more, and checked against the words over all three (30 words). Over 8 kHz phone
    // audio the local recogniser reads this sentence anywhere from WER 0.0 to 0.6 per saying, on
    // this code and on the code before issue 31 alike (2026-12-01, four runs each: 0.35-0.63 over
    // the three), so the bound is one a broken path (a wrong codec, rate or channel reads nearly
    // every word wrong) fails and the recogniser's variance does not (docs/sip.md).
    const heard: string[] = [first];
    for (let i = 1; i <= 2; i++) {
      await caller.say(speech);
      heard.push(await until(`the caller's turn ${i + 1} at the brain`, () => seen.turns[i]));
      await until(`reply ${i + 1} played out`, () => seen.repliesHeard.length > i);
      await new Promise((r) => setTimeout(r, 300));
    }
    const text = heard.join(" | ");
    const wer = wordErrorRate([SENTENCE, SENTENCE, SENTENCE].join(" "), heard.join(" "));
    assert(wer <= 0.75, `the brain got "${text}" for "${SENTENCE}" (WER ${wer})`);

    // Keys: 5 is only reported; # makes the brain end the call, which the worker does by BYE.
    await caller.press("5");
    await caller.press("#");
    const run = await sipp;
    assertSippPassed(run);
    assertEquals(seen.digits, ["5", "#"]);

    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "brain_ended");
    await until("the brain's End", () => seen.end);
    assertEquals(seen.end, "brain_ended");
    const events = sipLog(record);
    for (const kind of ["invite", "answered", "confirmed", "bye"]) {
      assert(events.includes(kind), `no sip/${kind} in ${events}`);
    }
    // The call ends as the BYE goes out; its answer is noted when it comes, maybe after the end.
    const byeAnswered = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "sip" && e.kind === "bye_answered",
    );
    assertEquals(byeAnswered.data.answer, "200 OK");
    // deno-lint-ignore no-explicit-any
    const start = record.log.find((e: any) =>
      e.source === "to_brain" && e.kind === "session_start"
    );
    assertEquals(start.data.phone.carrier, "sip");
    // deno-lint-ignore no-explicit-any
    const dtmf = record.log.filter((e: any) => e.source === "to_brain" && e.kind === "dtmf");
    // deno-lint-ignore no-explicit-any
    assertEquals(dtmf.map((e: any) => e.data.digit), ["5", "#"]);
    const t1 = record.timings.turns.find((t: { turn_id: string }) => t.turn_id === "t1");
    assertEquals(t1.user_text, first);
    // For docs/sip.md (a figure of this one call, not a benchmark: nothing is asserted on it).
    // deno-lint-ignore no-explicit-any
    const at = (kind: string) => Date.parse(record.log.find((e: any) => e.kind === kind).at);
    console.log(JSON.stringify({
      first,
      heard: text,
      wer,
      invite_to_answered_ms: at("answered") - at("invite"),
      turn_latency_ms: t1.latency_ms,
    }));
    assert(record.usage.recognised_seconds > 1, JSON.stringify(record.usage));
  } finally {
    await close();
  }
});

async function transferred(transport: "udp" | "tcp") {
  const { seen, sipPort, service, caller, connectOne, close } = await sipCallService(
    { transferTo: "tel:+14155550199" },
    { record_by_default: true },
  );
  try {
    const connect = await connectOne();
    const sessionId = connect.body.session_id;
    const notify = inDialog(
      "NOTIFY",
      2,
      "\n      Event: refer\n      Subscription-State: terminated;reason=noresource\n      Content-Type: message/sipfrag",
      "SIP/2.0 200 OK\n",
    );
    const scenario = `${HEAD}<scenario name="transfer">${invite(tokenOf(connect.body), caller.port)}
  <recv request="REFER" timeout="60000">
    <action><ereg regexp="tel:\\+14155550199" search_in="hdr" header="Refer-To:" check_it="true" assign_to="referto"/></action>
  </recv>
  <Reference variables="referto"/>${answer("202 Accepted")}${notify}
  <recv response="200"/>
  <recv request="BYE" timeout="20000"/>${answer()}
</scenario>`;
    const sipp = runSipp(scenario, sipPort, DIALLED, transport, SIPP_LONG);
    const t0 = performance.now();
    await caller.start();
    const run = await sipp;
    assertSippPassed(run);
    // The greeting was played before the REFER went out.
    assert(loudFrames(caller.audioSince(t0)) > 25, "the greeting was not heard before the REFER");
    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "transferred");
    const events = sipLog(record);
    for (const kind of ["refer", "refer_outcome", "bye"]) {
      assert(events.includes(kind), `no sip/${kind} in ${events}`);
    }
    assertEquals(seen.transferFailures, []);
    // Recorded as a web call is: 16 kHz stereo, the caller left, the bot (its greeting) right.
    assert(record.recording.effective && record.recording.url, JSON.stringify(record.recording));
    const wav = await Deno.readFile(new URL(record.recording.url));
    const pcm = new Int16Array(wav.buffer, 44, (wav.length - 44) >> 1);
    const seconds = pcm.length / 2 / 16000;
    assert(seconds > 1 && seconds < 30, `recorded ${seconds} s`);
    const bot = pcm.filter((_, i) => i % 2 === 1);
    assert(loudFrames(bot, 500) > 25, "the greeting is not on the recording's bot channel");
    await until("the brain's End", () => seen.end);
    assertEquals(seen.end, "transferred");
  } finally {
    await close();
  }
}

Deno.test("keys a trunk sends by SIP INFO (dtmf-relay and dtmf bodies) reach the brain; other INFO bodies get 415", async () => {
  const { seen, sipPort, service, caller, connectOne, close } = await sipCallService();
  try {
    const connect = await connectOne();
    const sessionId = connect.body.session_id;
    const info = (cseq: number, type: string, body: string) =>
      inDialog("INFO", cseq, `\n      Content-Type: ${type}`, body);
    const scenario = `${HEAD}<scenario name="info-dtmf">${
      invite(tokenOf(connect.body), caller.port)
    }
  <pause milliseconds="1000"/>${info(2, "text/plain", "hello")}
  <recv response="415"/>${info(3, "application/dtmf-relay", "Signal=5\nDuration=160\n")}
  <recv response="200"/>${info(4, "application/dtmf", "#")}
  <recv response="200"/>
  <recv request="BYE" timeout="60000"/>${answer()}
</scenario>`;
    const sipp = runSipp(scenario, sipPort, DIALLED, "udp", SIPP_LONG);
    await caller.start();
    assertSippPassed(await sipp);
    // 5 is only reported; # makes the brain end the call, which the worker does by BYE.
    assertEquals(seen.digits, ["5", "#"]);
    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "brain_ended");
    // deno-lint-ignore no-explicit-any
    const sip = record.log.filter((e: any) => e.source === "sip" && e.kind === "info_dtmf");
    // deno-lint-ignore no-explicit-any
    assertEquals(sip.map((e: any) => e.data.duration_ms), [160, 0]);
    // deno-lint-ignore no-explicit-any
    const dtmf = record.log.filter((e: any) => e.source === "to_brain" && e.kind === "dtmf");
    // deno-lint-ignore no-explicit-any
    assertEquals(dtmf.map((e: any) => [e.data.digit, e.data.duration_ms]), [
      ["5", 160],
      ["#", 0],
    ]);
  } finally {
    await close();
  }
});

Deno.test("the brain's transfer is a REFER: 202, a NOTIFY of 200, the worker's BYE, and the session ends transferred", () =>
  transferred("udp"));

Deno.test("the same transfer over one TCP connection: the worker's REFER and BYE go back on it", () =>
  transferred("tcp"));

Deno.test("the caller's BYE ends the session caller_hung_up; INVITEs without a usable token are refused and write nothing", async () => {
  const { seen, sipPort, service, caller, connectOne, close } = await sipCallService();
  const refusedWith = (token: string, status: number, phrase: string) =>
    refusal("refused", token, caller.port, { status, phrase, pauseMs: 300 });
  try {
    const connect = await connectOne();
    const sessionId = connect.body.session_id;
    const token = tokenOf(connect.body);
    // On hold for 1.5 s (a sendonly re-INVITE, answered recvonly), back, then the caller's BYE.
    const hold = (direction: string, cseq: number) =>
      `${
        inDialog(
          "INVITE",
          cseq,
          "\n      Content-Type: application/sdp",
          offerSdp(caller.port, direction),
        )
      }
  <recv response="100" optional="true"/>
  <recv response="200">
    <action><ereg regexp="a=${
        direction === "sendonly" ? "recvonly" : "sendrecv"
      }" search_in="body" check_it="true" assign_to="dir${cseq}"/></action>
  </recv>
  <Reference variables="dir${cseq}"/>${ack(cseq)}`;
    const scenario = `${HEAD}<scenario name="caller-hangs-up">${invite(token, caller.port)}
  <pause milliseconds="1000"/>${hold("sendonly", 2)}
  <pause milliseconds="1500"/>${hold("sendrecv", 3)}
  <pause milliseconds="1000"/>${inDialog("BYE", 4)}
  <recv response="200"/>
</scenario>`;
    const sipp = runSipp(scenario, sipPort, DIALLED, "udp", SIPP_LONG);
    await caller.start();
    const run = await sipp;
    assertSippPassed(run);
    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "caller_hung_up");
    // While held the worker sent nothing: one gap of about the hold in a 20 ms stream.
    const gaps = caller.heard.slice(1).map((h, i) => h.at - caller.heard[i].at);
    const longest = Math.max(...gaps);
    assert(longest > 1000 && longest < 5000, `longest gap in the bot's RTP ${longest} ms`);
    assertEquals(gaps.filter((g) => g > 900).length, 1, "one pause, the hold");
    assert(sipLog(record).includes("ended"), String(sipLog(record)));
    await until("the brain's End", () => seen.end);
    assertEquals(seen.end, "caller_hung_up");

    // The same token again: real, but spent.
    const spent = await runSipp(
      refusedWith(token, 403, "already started a call"),
      sipPort,
      DIALLED,
    );
    assertSippPassed(spent);

    // A waiting session: no token, or a token whose signature does not hold, is no session.
    const waiting = await connectOne();
    const good = tokenOf(waiting.body);
    const forged = good.slice(0, -4) + (good.endsWith("AAAA") ? "BBBB" : "AAAA");
    for (const t of ["", forged]) {
      const r = await runSipp(
        refusedWith(t, 404, "No such session").replace(";session= SIP/2.0", " SIP/2.0"),
        sipPort,
        DIALLED,
      );
      assertSippPassed(r);
    }
    // Nothing was written for the refused INVITEs: the session still waits for its token.
    const untouched = await service.record(waiting.body.session_id);
    assertEquals(untouched.status, "created");
    assertEquals(untouched.log, []);
  } finally {
    await close();
  }
});

Deno.test("a REFER the trunk refuses comes back to the brain as TransferFailed and the call goes on", async () => {
  const { seen, sipPort, service, caller, connectOne, close } = await sipCallService({
    transferTo: "+14155550199",
  });
  try {
    const connect = await connectOne();
    const sessionId = connect.body.session_id;
    // An E.164 target goes out as a tel: URI.
    const scenario = `${HEAD}<scenario name="transfer-refused">${
      invite(tokenOf(connect.body), caller.port)
    }
  <recv request="REFER" timeout="60000">
    <action><ereg regexp="tel:\\+14155550199>" search_in="hdr" header="Refer-To:" check_it="true" assign_to="referto"/></action>
  </recv>
  <Reference variables="referto"/>${answer("403 Forbidden")}
  <pause milliseconds="1500"/>${inDialog("BYE", 2)}
  <recv response="200"/>
</scenario>`;
    const sipp = runSipp(scenario, sipPort, DIALLED, "udp", SIPP_LONG);
    await caller.start();
    const run = await sipp;
    assertSippPassed(run);
    await until("TransferFailed at the brain", () => seen.transferFailures[0]);
    assertEquals(seen.transferFailures, ["REFER answered 403 Forbidden"]);
    // The call went on after the refusal, until the caller hung up.
    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "caller_hung_up");
  } finally {
    await close();
  }
});

Deno.test("a draining worker refuses new INVITEs with 503 and ends its phone calls with a BYE at the deadline", async () => {
  const { seen, sipPort, service, caller, connectOne, close } = await sipCallService();
  try {
    const first = await connectOne();
    const second = await connectOne();
    const scenario = `${HEAD}<scenario name="drained">${invite(tokenOf(first.body), caller.port)}
  <recv request="BYE" timeout="30000"/>${answer()}
</scenario>`;
    const sipp = runSipp(scenario, sipPort, DIALLED, "udp", SIPP_LONG);
    await caller.start();
    await until("the greeting", () => seen.phone);
    // SIGTERM: the drain gives the call DRAIN_TIMEOUT_SECONDS (2 s in tests), then ends it.
    service.worker.child.process.kill("SIGTERM");
    const refused = await runSipp(
      refusal("refused-while-draining", tokenOf(second.body), caller.port, {
        status: 503,
        phrase: "draining",
        pauseMs: 200,
      }),
      sipPort,
      DIALLED,
    );
    assertSippPassed(refused);
    const run = await sipp;
    assertSippPassed(run);
    const record = await service.record(first.body.session_id, "ended", 20_000);
    assertEquals(record.end_reason, "worker_shutdown");
    const untouched = await service.record(second.body.session_id);
    assertEquals(untouched.log, []);
  } finally {
    await close();
  }
});
