// SIPp 3.6 scenarios of a SIP trunk answering the worker's outbound INVITE (issue 34), for
// runSippTrunk (sipp.ts): the answers SIPp sends are built from the INVITE it received ([last_*]),
// its own To tag is `[pid]SIPpTag01[call_number]`, and each scenario fails SIPp's call on any
// message it did not expect or one that never came.
import { createHash } from "node:crypto";
import { XML_HEAD } from "./sipp_scenario.ts";

/** SIPp's To tag on every answer it gives in one call. */
const TAG = "[pid]SIPpTag01[call_number]";

/** An answer to the last request received, `status` with `extra` header lines and no body. */
export function trunkAnswer(status: string, extra: string[] = [], tagged = true): string {
  return `
  <send><![CDATA[
      SIP/2.0 ${status}
      [last_Via:]
      [last_From:]
      [last_To:]${tagged ? `;tag=${TAG}` : ""}
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:trunk@[local_ip]:[local_port]>${extra.map((h) => `\n      ${h}`).join("")}
      Content-Length: 0
]]></send>`;
}

/** The 200 with an SDP answer: PCMU and telephone-event at `rtpPort` (the test's phone). */
export function trunkAnswersOk(rtpPort: number): string {
  return `
  <send retrans="500"><![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:];tag=${TAG}
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:trunk@[local_ip]:[local_port]>
      Content-Type: application/sdp
      Content-Length: [len]

      v=0
      o=trunk 1 1 IN IP4 127.0.0.1
      s=-
      c=IN IP4 127.0.0.1
      t=0 0
      m=audio ${rtpPort} RTP/AVP 0 101
      a=rtpmap:0 PCMU/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-15
      a=sendrecv
]]></send>`;
}

/** The INVITE, with an SDP offer of PCMU, PCMA and telephone-event checked; From kept as $caller. */
export const RECV_INVITE = `
  <recv request="INVITE" rrs="true">
    <action>
      <ereg regexp="m=audio [0-9]+ RTP/AVP 0 8 101" search_in="body" check_it="true" assign_to="offer"/>
      <ereg regexp=".*" search_in="hdr" header="From:" assign_to="caller"/>
    </action>
  </recv>
  <Reference variables="offer,caller"/>`;

/** A non-2xx final answer `status` to the INVITE, and the worker's ACK of it. */
export function refusesWith(status: string, before: string[] = ["100 Trying"]): string {
  return `${XML_HEAD}<scenario name="refuses ${status}">${RECV_INVITE}${
    before.map((s) => trunkAnswer(s, [], s !== "100 Trying")).join("")
  }${trunkAnswer(status)}
  <recv request="ACK"/>
</scenario>`;
}

/**
 * The callee answers; `pauseMs` later it hangs up (BYE, which the worker answers 200). A BYE from
 * the worker first fails the scenario.
 */
export function answersThenHangsUp(rtpPort: number, pauseMs: number, before = ""): string {
  return `${XML_HEAD}<scenario name="answers">${before || RECV_INVITE}
  ${trunkAnswer("180 Ringing")}${trunkAnswersOk(rtpPort)}
  <recv request="ACK"/>
  <pause milliseconds="${pauseMs}"/>
  <send retrans="500"><![CDATA[
      BYE [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: <sip:callee@[local_ip]>;tag=${TAG}
      To: [$caller]
      Call-ID: [call_id]
      CSeq: 1 BYE
      Max-Forwards: 70
      Content-Length: 0
]]></send>
  <recv response="200"/>
</scenario>`;
}

/** Rings, then never answers: the worker's CANCEL is answered 200 and the INVITE 487. */
export function ringsUntilCancelled(): string {
  return `${XML_HEAD}<scenario name="rings">${RECV_INVITE}${trunkAnswer("100 Trying", [], false)}${
    trunkAnswer("180 Ringing")
  }
  <recv request="CANCEL" timeout="15000"/>${trunkAnswer("200 OK")}
  <send><![CDATA[
      SIP/2.0 487 Request Terminated
      [last_Via:]
      [last_From:]
      [last_To:];tag=${TAG}
      [last_Call-ID:]
      CSeq: 1 INVITE
      Content-Length: 0
]]></send>
  <recv request="ACK"/>
</scenario>`;
}

/** The nonce and realm of challengesThenAnswers's challenge. */
export const CHALLENGE = { realm: "trunk.test", nonce: "4f1c2a9b7d" };

/**
 * A digest challenge first (401 WWW-Authenticate, or 407 Proxy-Authenticate), then the INVITE
 * with credentials SIPp checks (verifyauth, MD5): right, the call is answered as
 * answersThenHangsUp's (hanging up `pauseMs` after the ACK); wrong, 403 and SIPp's call fails.
 */
export function challengesThenAnswers(
  status: "401" | "407",
  user: string,
  password: string,
  rtpPort: number,
  pauseMs = 500,
): string {
  const [phrase, header] = status === "401"
    ? ["Unauthorized", "WWW-Authenticate"]
    : ["Proxy Authentication Required", "Proxy-Authenticate"];
  const challenged = `${RECV_INVITE}${trunkAnswer("100 Trying", [], false)}${
    trunkAnswer(`${status} ${phrase}`, [
      `${header}: Digest realm="${CHALLENGE.realm}", nonce="${CHALLENGE.nonce}", qop="auth", algorithm=MD5`,
    ])
  }
  <recv request="ACK"/>
  <recv request="INVITE">
    <action>${
    status === "401"
      ? `
      <verifyauth assign_to="authvalid" username="${user}" password="${password}"/>`
      // SIPp 3.6's verifyauth reads only Authorization: a Proxy-Authorization is checked for its
      // presence and user here, and its response hash by the test (proxyAuthorizationHolds).
      : `
      <ereg regexp="Digest username=.${user}." search_in="hdr" header="Proxy-Authorization:" assign_to="authvalid"/>`
  }
    </action>
  </recv>
  <nop hide="true" test="authvalid" next="good"/>
  ${trunkAnswer("403 Forbidden")}
  <recv request="ACK"/>
  <recv request="NEVER" timeout="100"/>
  <label id="good"/>`;
  return answersThenHangsUp(rtpPort, pauseMs, challenged);
}

/**
 * Whether the Proxy-Authorization in SIPp's message log answers CHALLENGE for `user` and
 * `password` (RFC 2617 3.2.2.1, qop=auth), computed here apart from the worker's digest code.
 */
export function proxyAuthorizationHolds(messages: string, user: string, password: string): boolean {
  const line = /^Proxy-Authorization: Digest (.*)$/m.exec(messages)?.[1];
  if (!line) return false;
  const p = Object.fromEntries(
    [...line.matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]+))/g)].map((m) => [m[1], m[2] ?? m[3]]),
  );
  const md5 = (s: string) => createHash("md5").update(s).digest("hex");
  const ha1 = md5(`${user}:${CHALLENGE.realm}:${password}`);
  const ha2 = md5(`INVITE:${p.uri}`);
  const expected = md5(`${ha1}:${CHALLENGE.nonce}:${p.nc}:${p.cnonce}:auth:${ha2}`);
  return p.username === user && p.realm === CHALLENGE.realm && p.response === expected;
}

/**
 * A trunk whose callees answer by the dialled number's last digit, for campaigns: 1 is busy
 * (486), 2 rings until the worker's CANCEL (487: no_answer), any other answers (its media to
 * `rtpPort`) and hangs up `pauseMs` after the ACK.
 */
export function answersByLastDigit(rtpPort: number, pauseMs: number): string {
  return `${XML_HEAD}<scenario name="answers by the last digit">
  <recv request="INVITE" rrs="true">
    <action>
      <ereg regexp="1@" search_in="hdr" header="To:" assign_to="busy"/>
      <ereg regexp="2@" search_in="hdr" header="To:" assign_to="silent"/>
      <ereg regexp=".*" search_in="hdr" header="From:" assign_to="caller"/>
    </action>
  </recv>
  <Reference variables="busy,silent"/>${trunkAnswer("100 Trying", [], false)}
  <nop hide="true" test="busy" next="busy"/>
  <nop hide="true" test="silent" next="silent"/>
  ${trunkAnswer("180 Ringing")}${trunkAnswersOk(rtpPort)}
  <recv request="ACK"/>
  <pause milliseconds="${pauseMs}"/>
  <send retrans="500"><![CDATA[
      BYE [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: <sip:callee@[local_ip]>;tag=${TAG}
      To: [$caller]
      Call-ID: [call_id]
      CSeq: 1 BYE
      Max-Forwards: 70
      Content-Length: 0
]]></send>
  <recv response="200" next="end"/>
  <label id="busy"/>${trunkAnswer("486 Busy Here")}
  <recv request="ACK" next="end"/>
  <label id="silent"/>${trunkAnswer("180 Ringing")}
  <recv request="CANCEL" timeout="30000"/>${trunkAnswer("200 OK")}
  <send><![CDATA[
      SIP/2.0 487 Request Terminated
      [last_Via:]
      [last_From:]
      [last_To:];tag=${TAG}
      [last_Call-ID:]
      CSeq: 1 INVITE
      Content-Length: 0
]]></send>
  <recv request="ACK"/>
  <label id="end"/>
</scenario>`;
}

/**
 * The callee answers and the worker hangs up: its BYE (within `byeWithinMs`) is answered 200. The
 * scenario fails when no BYE comes (a call left up, e.g. a machine not hung up on).
 */
export function answersThenIsHungUp(rtpPort: number, byeWithinMs = 20_000): string {
  return `${XML_HEAD}<scenario name="answers, is hung up on">${RECV_INVITE}
  ${trunkAnswer("180 Ringing")}${trunkAnswersOk(rtpPort)}
  <recv request="ACK"/>
  <recv request="BYE" timeout="${byeWithinMs}"/>${trunkAnswer("200 OK", [], false)}
</scenario>`;
}
