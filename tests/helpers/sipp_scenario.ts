// Builders for SIPp 3.6 scenario XML (tests/helpers/sipp.ts runs them): the XML head, the lines of
// a request SIPp sends as the caller (its [keywords] filled in per call by SIPp), the SDP offer,
// and the ACK of a non-2xx answer. Each builder yields the text inside a <send><![CDATA[...]]>,
// indented as SIPp's own examples are (SIPp strips the indent and ends lines with CRLF).

/** The first line of every scenario file. */
export const XML_HEAD = `<?xml version="1.0" encoding="ISO-8859-1" ?>`;

/** The number SIPp calls from (the From user) unless a scenario says otherwise. */
export const SIPP_CALLER = "+15550111";

/** The Request-URI and To of a first request: the dialled number (-s) at the peer. */
const SERVICE_URI = "sip:[service]@[remote_ip]:[remote_port]";

/** A request ends here when it has no body. */
export const NO_BODY = "\n      Content-Length: 0\n";

export interface RequestLines {
  /** The Request-URI; the dialled number at the peer unless given (`[next_url]` in a dialog). */
  uri?: string;
  /** The Via branch: a new one unless given (`[branch-N]`: the one sent N messages back). */
  branch?: string;
  /** The From user. */
  caller?: string;
  /** The whole To line: to the dialled number unless given (`[last_To:]` in a dialog). */
  to?: string;
  /** A `[routes]` line: the Record-Route of the 200 (kept by `rrs="true"`) as Route. */
  routes?: boolean;
  /** A Contact line (INVITE, OPTIONS, re-INVITE); ACK, BYE and CANCEL leave it out. */
  contact?: boolean;
  /** More header lines after Max-Forwards, each starting "\n      ". */
  extra?: string;
}

/**
 * The start line and headers of a request SIPp sends, up to Max-Forwards and `extra`; follow it
 * with NO_BODY, sdpOffer(...), or a Content-Length of your own.
 */
export function request(method: string, cseq: number, o: RequestLines = {}): string {
  const to = o.to ?? `To: <${SERVICE_URI}>`;
  return `
      ${method} ${o.uri ?? SERVICE_URI} SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=${o.branch ?? "[branch]"}
      From: sipp <sip:${o.caller ?? SIPP_CALLER}@[local_ip]:[local_port]>;tag=[call_number]
      ${to}${o.routes ? "\n      [routes]" : ""}
      Call-ID: [call_id]
      CSeq: ${cseq} ${method}${
    o.contact === false ? "" : "\n      Contact: <sip:sipp@[local_ip]:[local_port]>"
  }
      Max-Forwards: 70${o.extra ?? ""}`;
}

/**
 * The ACK of a non-2xx final answer to the INVITE of `cseq` (RFC 3261 17.1.1.3): the INVITE's
 * branch, `back` messages earlier in the scenario, and the To of the answer.
 */
export function ackOfRefusal(
  cseq: number,
  back: number,
  o: Pick<RequestLines, "uri" | "caller"> = {},
): string {
  return request("ACK", cseq, {
    ...o,
    branch: `[branch-${back}]`,
    to: "[last_To:]",
    contact: false,
  }) + NO_BODY;
}

const RTPMAP: Record<number, string> = {
  0: "PCMU/8000",
  8: "PCMA/8000",
  101: "telephone-event/8000",
};

export interface SdpLines {
  /** The m= port: SIPp's media port unless given (a number, or `[rtpstream_audio_port]`). */
  port?: number | string;
  /** The o= and c= address: SIPp's local and media IP keywords unless given (IPv4). */
  address?: string;
  /** `a=fmtp:101 0-15`: the DTMF events offered (RFC 4733). */
  fmtp?: boolean;
  /** An `a=` direction line (sendrecv, sendonly for a hold). */
  direction?: string;
}

/** SDP (RFC 4566) lines for one audio stream of `payloadTypes` (0 PCMU, 8 PCMA, 101 DTMF). */
export function sdp(payloadTypes: number[], o: SdpLines = {}): string {
  const [origin, connection] = o.address
    ? [`IP4 ${o.address}`, `IP4 ${o.address}`]
    : ["IP[local_ip_type] [local_ip]", "IP[media_ip_type] [media_ip]"];
  return [
    "v=0",
    `o=user1 53655765 2353687637 IN ${origin}`,
    "s=-",
    `c=IN ${connection}`,
    "t=0 0",
    `m=audio ${o.port ?? "[media_port]"} RTP/AVP ${payloadTypes.join(" ")}`,
    ...payloadTypes.map((pt) => `a=rtpmap:${pt} ${RTPMAP[pt]}`),
    ...(o.fmtp ? ["a=fmtp:101 0-15"] : []),
    ...(o.direction ? [`a=${o.direction}`] : []),
  ].map((line) => `      ${line}\n`).join("");
}

/** A request's SDP body with its Content-Type and Content-Length (SIPp counts [len]). */
export function sdpOffer(payloadTypes: number[], o: SdpLines = {}): string {
  return `
      Content-Type: application/sdp
      Content-Length: [len]

${sdp(payloadTypes, o)}`;
}

/**
 * A phone's INVITE to `dialled` at `uri` (the dialled number at the peer, or a redirect's Contact)
 * with an offer of `payloadTypes` on its own RTP address, retransmitted until answered (SIPp's
 * retrans), and the 100 it may get first.
 */
export function phoneInvite(
  dialled: string,
  uri: string,
  cseq: number,
  payloadTypes: number[],
  offer: SdpLines,
): string {
  const to = `To: <sip:${dialled}@[remote_ip]:[remote_port]>`;
  return `
  <send retrans="500"><![CDATA[${request("INVITE", cseq, { uri, to })}${
    sdpOffer(payloadTypes, offer)
  }]]></send>
  <recv response="100" optional="true"/>`;
}

/** A request in the dialog the 200 set up (its To tag kept as `[$wtag]`), with no body. */
export function inDialog(method: string, cseq: number, dialled: string): string {
  const to = `To: <sip:${dialled}@[remote_ip]:[remote_port]>;tag=[$wtag]`;
  return `
  <send><![CDATA[${
    request(method, cseq, { uri: "[next_url]", to, contact: false })
  }${NO_BODY}]]></send>`;
}

/**
 * A number dialled at a redirect server and the 302 followed, as a phone does (RFC 3261 section
 * 8.1.3.4: same Call-ID and tags, CSeq + 1): `invite(uri, cseq)` (a whole `<send>` of an INVITE
 * and what may precede its answer) to the dialled number, the 302 whose Contact names the worker
 * and the session token (kept as `[$ruri]`, `[$whost]`, `[$wport]`), its ACK on the INVITE's
 * branch, then the same INVITE to the Contact with CSeq 2. The scenario goes on from its answer.
 */
export function followRedirect(
  dialled: string,
  invite: (uri: string, cseq: number) => string,
): string {
  return `${invite(`sip:${dialled}@[remote_ip]:[remote_port]`, 1)}
  <recv response="302">
    <action><ereg regexp="&lt;(sip:[^@]+@([0-9.]+):([0-9]+);session=[^&gt;]+)&gt;" search_in="hdr" header="Contact:" check_it="true" assign_to="c,ruri,whost,wport"/></action>
  </recv>
  <Reference variables="c"/>
  <send><![CDATA[${
    request("ACK", 1, {
      uri: `sip:${dialled}@[remote_ip]:[remote_port]`,
      branch: "[branch-3]",
      to: "[last_To:]",
      contact: false,
    })
  }${NO_BODY}]]></send>
  <nop><action><setdest host="[$whost]" port="[$wport]" protocol="udp"/></action></nop>
  ${invite("[$ruri]", 2)}`;
}

/**
 * SIPp's answer to a request the worker sent in the dialog (a BYE, REFER, NOTIFY...): `status`
 * with the request's own dialog headers, no body; a whole `<send>` element.
 */
export function answerWorker(status = "200 OK"): string {
  return `
  <send><![CDATA[
      SIP/2.0 ${status}
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:sipp@[local_ip]:[local_port]>
      Content-Length: 0
]]></send>`;
}

/**
 * A phone calling a worker straight with its session token (as the control plane's 302 sends it):
 * INVITE offering PCMU and telephone-event from `media`, ACK, then `afterAck` (media to play, a
 * REFER to answer...), then the worker's BYE answered. A whole `<scenario>`.
 */
export function tokenCallScenario(o: {
  name: string;
  token: string;
  dialled: string;
  caller: string;
  /** The phone's RTP; absent: SIPp's own (play_pcap_audio in `afterAck`). */
  media?: { port: number; address: string };
  afterAck?: string;
}): string {
  const at = `sip:${o.dialled}@[remote_ip]:[remote_port]`;
  const toWorker = `To: <${at}>;tag=[$wtag]`;
  return `${XML_HEAD}<scenario name="${o.name}">
  <send retrans="500"><![CDATA[${
    request("INVITE", 1, { uri: `${at};session=${o.token}`, caller: o.caller, to: `To: <${at}>` }) +
    sdpOffer([0, 101], { ...o.media, fmtp: true, direction: "sendrecv" })
  }]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="to,wtag"/></action>
  </recv>
  <Reference variables="to"/>
  <send><![CDATA[${
    request("ACK", 1, { uri: at, caller: o.caller, to: toWorker, contact: false }) + NO_BODY
  }]]></send>${o.afterAck ?? ""}
  <recv request="BYE" timeout="60000"/>${answerWorker()}
</scenario>`;
}
