// SIP messages (RFC 3261 section 7): parsing from bytes and serializing back. Parsing refuses
// what a UAS must refuse with 400 and says why; it keeps what it could read so the 400 can still
// be addressed (section 8.2.6 needs Via, From, To, Call-ID and CSeq).
import { addressFault, canonicalName, splitList } from "./headers.ts";

export interface Header {
  /** Canonical long form ("Via", "Call-ID"), whatever form the wire used. */
  name: string;
  value: string;
}

interface MessageBase {
  headers: Header[];
  body: Uint8Array;
}
export interface SipRequest extends MessageBase {
  kind: "request";
  method: string;
  uri: string;
}
export interface SipResponse extends MessageBase {
  kind: "response";
  status: number;
  reason: string;
}
export type SipMessage = SipRequest | SipResponse;

export type ParseResult =
  | { ok: true; message: SipMessage }
  /** `partial` is what was read before the fault, when the start line and headers were. */
  | {
    ok: false;
    reason: string;
    partial?: SipMessage;
    /** The status to refuse with when it is not 400 (505 for another SIP version). */
    status?: number;
  };

/** RFC 3261 token (section 25.1): methods and header names. Unknown methods still parse (405, not 400). */
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const CRLF = "\r\n";
const decoder = new TextDecoder("utf-8", { fatal: false });
const encoder = new TextEncoder();

/** The headers every request must carry (RFC 3261 section 8.1.1), Max-Forwards aside. */
const REQUIRED = ["Via", "From", "To", "Call-ID", "CSeq"];

/**
 * Parses one message. `stream` says the bytes came over TCP, where Content-Length is mandatory
 * (section 18.3); over UDP an absent one means the rest of the datagram, and bytes past it are
 * dropped.
 */
export function parseMessage(bytes: Uint8Array, stream = false): ParseResult {
  let start = 0;
  // Leading CRLFs are keep-alives or stray line ends (section 7.5): skipped.
  while (start + 1 < bytes.length && bytes[start] === 13 && bytes[start + 1] === 10) start += 2;
  const end = headEnd(bytes, start);
  if (end < 0) return { ok: false, reason: "no blank line after the headers" };
  const head = decoder.decode(bytes.subarray(start, end));
  const lines = unfold(head.split(CRLF));
  const first = parseStartLine(lines[0] ?? "");
  if (typeof first === "string") return { ok: false, reason: first };

  const headers: Header[] = [];
  let fault: string | undefined;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon).trim() : "";
    if (!TOKEN.test(name)) {
      fault ??= `header line without a name: ${clip(line)}`;
      continue;
    }
    headers.push({ name: canonicalName(name), value: line.slice(colon + 1).trim() });
  }
  const [line, version] = first;
  const message: SipMessage = { ...line, headers, body: new Uint8Array() };
  if (fault) return { ok: false, reason: fault, partial: message };
  // Another well-formed version is 505 (section 21.5.20; RFC 4475 badvers), not 400.
  if (version !== "SIP/2.0") {
    return { ok: false, reason: `unsupported version ${version}`, partial: message, status: 505 };
  }

  // The header checks come before the body's length, so the fault named is the header's.
  const invalid = checkHeaders(message);
  if (invalid) return { ok: false, reason: invalid, partial: message };
  const rest = bytes.subarray(end + 4);
  const lengths = headers.filter((h) => h.name === "Content-Length").map((h) => h.value);
  if (lengths.length > 1 && new Set(lengths).size > 1) {
    return { ok: false, reason: "conflicting Content-Length headers", partial: message };
  }
  if (lengths.length === 0) {
    if (stream) {
      return { ok: false, reason: "Content-Length is required over TCP", partial: message };
    }
    message.body = rest.slice();
  } else {
    if (!/^\d{1,9}$/.test(lengths[0])) {
      return { ok: false, reason: "Content-Length is not a number", partial: message };
    }
    const length = Number(lengths[0]);
    if (length > rest.length) {
      return { ok: false, reason: "Content-Length is longer than the body", partial: message };
    }
    message.body = rest.slice(0, length);
  }
  return { ok: true, message };
}

/** Index of the CRLFCRLF that ends the headers, or -1. */
export function headEnd(bytes: Uint8Array, from = 0): number {
  for (let i = from; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

/** Section 7.3.1: a line starting with SP or HT continues the one above, folded to one SP. */
function unfold(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if ((line.startsWith(" ") || line.startsWith("\t")) && out.length > 1) {
      out[out.length - 1] = out[out.length - 1].trimEnd() + " " + line.trim();
    } else out.push(line);
  }
  return out;
}

/** The start line and its SIP version. */
type StartLine = [
  Omit<SipRequest, "headers" | "body"> | Omit<SipResponse, "headers" | "body">,
  string,
];

function parseStartLine(line: string): StartLine | string {
  if (line.startsWith("SIP/")) {
    const m = /^SIP\/2\.0 ([1-6]\d\d) (.*)$/.exec(line);
    if (!m) return `not a SIP/2.0 status line: ${clip(line)}`;
    return [{ kind: "response", status: Number(m[1]), reason: m[2] }, "SIP/2.0"];
  }
  const parts = line.split(" ");
  if (parts.length !== 3) return `request line is not "Method URI SIP/2.0": ${clip(line)}`;
  const [method, uri, version] = parts;
  if (!TOKEN.test(method)) return `method is not a token: ${clip(method)}`;
  if (!/^SIP\/\d+\.\d+$/.test(version)) return `not a SIP version: ${clip(version)}`;
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(uri)) return `Request-URI is not a URI: ${clip(uri)}`;
  // Section 19.1.1's table: a SIP Request-URI carries no headers (RFC 4475 escruri).
  if (/^sips?:/i.test(uri) && uri.slice(uri.lastIndexOf("@") + 1).includes("?")) {
    return `Request-URI carries headers: ${clip(uri)}`;
  }
  return [{ kind: "request", method, uri }, version];
}

/** The header checks of sections 8.1.1 and 8.2: what a UAS refuses with 400. */
function checkHeaders(message: SipMessage): string | undefined {
  if (message.kind === "request") {
    for (const name of REQUIRED) {
      if (!message.headers.some((h) => h.name === name)) return `missing ${name} header`;
    }
  }
  for (const name of ["From", "To", "Call-ID", "CSeq", "Max-Forwards"]) {
    if (message.headers.filter((h) => h.name === name).length > 1) return `more than one ${name}`;
  }
  const cseq = header(message, "CSeq");
  if (cseq !== undefined) {
    const m = /^(\d{1,10})\s+(\S+)$/.exec(cseq);
    if (!m || Number(m[1]) > 2 ** 31 - 1) return "CSeq is not a number and a method";
    if (message.kind === "request" && m[2] !== message.method) {
      return "CSeq method does not match the request method";
    }
  }
  // 1*DIGIT, leading zeros allowed (RFC 4475 wsinv's 0068), at most 255 (scalarlg's 300 is not).
  const maxForwards = header(message, "Max-Forwards");
  if (maxForwards !== undefined && !/^\d+$/.test(maxForwards)) {
    return "Max-Forwards is not a number";
  }
  if (maxForwards !== undefined && +maxForwards > 255) return "Max-Forwards is over 255";
  for (const name of ["From", "To"]) {
    const value = header(message, name);
    const bad = value === undefined ? undefined : addressFault(value);
    if (bad) return `${name}: ${bad}`;
  }
  for (const contact of headerList(message, "Contact")) {
    const bad = contact === "*" ? undefined : addressFault(contact);
    if (bad) return `Contact: ${bad}`;
  }
  // Section 20.17: rfc1123-date, always in GMT (RFC 4475 baddate).
  const date = header(message, "Date");
  if (
    date !== undefined && !/^[A-Za-z]{3}, \d{1,2} [A-Za-z]{3} \d{4} \d\d:\d\d:\d\d GMT$/.test(date)
  ) {
    return "Date is not an RFC 1123 date in GMT";
  }
  for (const via of headerList(message, "Via")) {
    if (!/^SIP\s*\/\s*2\.0\s*\/\s*[A-Za-z]+\s+\S/.test(via)) return "Via is not SIP/2.0/transport";
  }
  return undefined;
}

/** The first value of a header, or undefined. */
export function header(message: SipMessage, name: string): string | undefined {
  return message.headers.find((h) => h.name === name)?.value;
}

/** Every value of a header, lines and comma-separated values alike (section 7.3.1). */
export function headerList(message: SipMessage, name: string): string[] {
  return message.headers.filter((h) => h.name === name).flatMap((h) => splitList(h.value));
}

/** Bytes for the wire: canonical header names and a Content-Length always (section 18.3 wants it on TCP). */
export function serialize(message: SipMessage): Uint8Array {
  const start = message.kind === "request"
    ? `${message.method} ${message.uri} SIP/2.0`
    : `SIP/2.0 ${message.status} ${message.reason}`;
  const lines = [start];
  for (const h of message.headers) {
    if (h.name !== "Content-Length") lines.push(`${h.name}: ${h.value}`);
  }
  lines.push(`Content-Length: ${message.body.length}`);
  const head = encoder.encode(lines.join(CRLF) + CRLF + CRLF);
  const out = new Uint8Array(head.length + message.body.length);
  out.set(head);
  out.set(message.body, head.length);
  return out;
}

function clip(s: string): string {
  return JSON.stringify(s.length > 60 ? s.slice(0, 60) + "…" : s);
}
