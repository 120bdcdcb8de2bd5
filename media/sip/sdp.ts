// The SDP answer (RFC 3264) for a phone call: one audio stream in PCMU or PCMA at 8 kHz, chosen
// in the offer's order of preference, plus telephone-event (RFC 4733) when offered so DTMF can
// come as RTP events. Other streams are refused with port 0, as section 6 of RFC 3264 says.

export type PhoneCodec = "PCMU" | "PCMA";

export interface AnswerChoice {
  codec: PhoneCodec;
  payloadType: number;
  /** The offer's telephone-event payload type at 8 kHz, when it offered one. */
  dtmfPayloadType?: number;
  /** The offer's red/8000 (RFC 2198) over telephone-event: several events in one packet. */
  redPayloadType?: number;
  /** Where the caller wants our RTP: the offer's connection address and audio port. */
  remoteAddress: string;
  remotePort: number;
  /** Our direction, the mirror of the offer's (a hold offer's `sendonly` is `recvonly` here). */
  direction: "sendrecv" | "sendonly" | "recvonly" | "inactive";
  ptime: number;
}

export type Answer = { ok: true; choice: AnswerChoice; sdp: string } | {
  ok: false;
  reason: string;
};

interface Media {
  kind: string;
  port: number;
  proto: string;
  formats: string[];
  attributes: string[];
  connection?: string;
}

const STATIC: Record<number, PhoneCodec> = { 0: "PCMU", 8: "PCMA" };
const MIRROR = {
  sendrecv: "sendrecv",
  sendonly: "recvonly",
  recvonly: "sendonly",
  inactive: "inactive",
} as const;

export interface Local {
  /** The address RTP should reach this worker on. */
  address: string;
  /** The RTP port opened for this call. */
  port: number;
  /** Session id and version for o= (section 5 of RFC 4566; the version grows on re-offers). */
  sessionId: string;
  version: number;
}

export function answerOffer(offer: string, local: Local): Answer {
  const lines = offer.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  if (lines[0] !== "v=0") return { ok: false, reason: "offer is not SDP (no v=0)" };
  let sessionConnection: string | undefined;
  const sessionAttributes: string[] = [];
  const media: Media[] = [];
  for (const line of lines) {
    const type = line[0], value = line.slice(2);
    if (line[1] !== "=") {
      return { ok: false, reason: `SDP line without type=value: ${line.slice(0, 40)}` };
    }
    const current = media[media.length - 1];
    if (type === "m") {
      const [kind, port, proto, ...formats] = value.split(/\s+/);
      if (!/^\d+(\/\d+)?$/.test(port ?? "")) return { ok: false, reason: "m= line without a port" };
      media.push({ kind, port: parseInt(port), proto, formats, attributes: [] });
    } else if (type === "c") {
      const address = /^IN IP[46] (\S+)$/.exec(value)?.[1]?.split("/")[0];
      if (!address) return { ok: false, reason: "c= line is not IN IP4/IP6" };
      if (current) current.connection = address;
      else sessionConnection = address;
    } else if (type === "a") (current ? current.attributes : sessionAttributes).push(value);
  }

  let chosen: { index: number; choice: AnswerChoice } | undefined;
  for (const [index, m] of media.entries()) {
    if (chosen || m.kind !== "audio" || m.port === 0 || m.proto !== "RTP/AVP") continue;
    const rtpmap = rtpmaps(m.attributes);
    const codecPt = m.formats.map(Number).find((pt) => codecOf(pt, rtpmap) !== undefined);
    if (codecPt === undefined) continue;
    const connection = m.connection ?? sessionConnection;
    if (!connection) return { ok: false, reason: "offer has no connection address" };
    const dtmf = m.formats.map(Number).find((pt) => rtpmap.get(pt) === "telephone-event/8000");
    // Redundancy is taken only when it carries telephone-event alone (fmtp "101/101/...").
    const red = dtmf === undefined
      ? undefined
      : m.formats.map(Number).find((pt) =>
        rtpmap.get(pt) === "RED/8000" &&
        m.attributes.some((a) => new RegExp(`^fmtp:${pt} ${dtmf}(/${dtmf})*$`).test(a))
      );
    const offered = directionOf(m.attributes) ?? directionOf(sessionAttributes) ?? "sendrecv";
    const ptime = Number(m.attributes.find((a) => a.startsWith("ptime:"))?.slice(6) ?? 20);
    chosen = {
      index,
      choice: {
        codec: codecOf(codecPt, rtpmap)!,
        payloadType: codecPt,
        dtmfPayloadType: dtmf,
        ...(red === undefined ? {} : { redPayloadType: red }),
        remoteAddress: connection,
        remotePort: m.port,
        direction: MIRROR[offered],
        ptime: ptime > 0 && ptime <= 60 ? ptime : 20,
      },
    };
  }
  if (!chosen) {
    return { ok: false, reason: "no audio stream in PCMU or PCMA at 8 kHz over RTP/AVP" };
  }

  const { choice } = chosen;
  const family = local.address.includes(":") ? "IP6" : "IP4";
  const out = [
    "v=0",
    `o=- ${local.sessionId} ${local.version} IN ${family} ${local.address}`,
    "s=-",
    `c=IN ${family} ${local.address}`,
    "t=0 0",
  ];
  for (const [index, m] of media.entries()) {
    if (index !== chosen.index) {
      out.push(`m=${m.kind} 0 ${m.proto} ${m.formats[0] ?? "0"}`);
      continue;
    }
    const pts = [
      choice.payloadType,
      ...(choice.dtmfPayloadType === undefined ? [] : [choice.dtmfPayloadType]),
      ...(choice.redPayloadType === undefined ? [] : [choice.redPayloadType]),
    ];
    out.push(`m=audio ${local.port} RTP/AVP ${pts.join(" ")}`);
    out.push(`a=rtpmap:${choice.payloadType} ${choice.codec}/8000`);
    if (choice.dtmfPayloadType !== undefined) {
      out.push(`a=rtpmap:${choice.dtmfPayloadType} telephone-event/8000`);
      out.push(`a=fmtp:${choice.dtmfPayloadType} 0-15`);
    }
    if (choice.redPayloadType !== undefined) {
      out.push(`a=rtpmap:${choice.redPayloadType} red/8000`);
      out.push(
        `a=fmtp:${choice.redPayloadType} ${choice.dtmfPayloadType}/${choice.dtmfPayloadType}`,
      );
    }
    out.push(`a=ptime:${choice.ptime}`, `a=${choice.direction}`);
  }
  return { ok: true, choice, sdp: out.join("\r\n") + "\r\n" };
}

/**
 * The worker's offer when it places a call (uac.ts): PCMU, PCMA and telephone-event (RFC 4733)
 * at 8 kHz on one sendrecv audio stream, read back by answerOffer from the callee's answer.
 */
export function offerSdp(local: Local): string {
  const family = local.address.includes(":") ? "IP6" : "IP4";
  return [
    "v=0",
    `o=- ${local.sessionId} ${local.version} IN ${family} ${local.address}`,
    "s=-",
    `c=IN ${family} ${local.address}`,
    "t=0 0",
    `m=audio ${local.port} RTP/AVP 0 8 101`,
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=fmtp:101 0-15",
    "a=ptime:20",
    "a=sendrecv",
  ].join("\r\n") + "\r\n";
}

/** `a=rtpmap:<pt> <name>/<rate>` as pt → "name/rate", the name in the spelling RFC 3551 uses. */
function rtpmaps(attributes: string[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const a of attributes) {
    const m = /^rtpmap:(\d+)\s+([^/\s]+)\/(\d+)/.exec(a);
    if (m) {
      const name = m[2].toLowerCase() === "telephone-event"
        ? "telephone-event"
        : m[2].toUpperCase();
      out.set(Number(m[1]), `${name}/${m[3]}`);
    }
  }
  return out;
}

function codecOf(pt: number, rtpmap: Map<number, string>): PhoneCodec | undefined {
  const mapped = rtpmap.get(pt);
  if (mapped === undefined) return STATIC[pt];
  if (mapped === "PCMU/8000" || mapped === "PCMA/8000") return mapped.slice(0, 4) as PhoneCodec;
  return undefined;
}

function directionOf(attributes: string[]): keyof typeof MIRROR | undefined {
  return attributes.find((a): a is keyof typeof MIRROR => a in MIRROR);
}

/** Whether an INVITE's Accept list takes an SDP answer; no Accept means SDP (section 20.1). */
export function acceptsSdp(accept: string[]): boolean {
  return accept.length === 0 ||
    accept.some((a) => /^(application\/(sdp|\*)|\*\/\*)\s*(;|$)/i.test(a.trim()));
}
