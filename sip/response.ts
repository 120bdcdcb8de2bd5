// Building a response to a request (RFC 3261 section 8.2.6): Via, From, To, Call-ID and CSeq are
// copied; the To gains the UAS's tag on every response but 100.
import type { Header, SipRequest, SipResponse } from "./message.ts";
import { parseVia, tagOf } from "./headers.ts";
import { headerList } from "./message.ts";

const COPIED = new Set(["Via", "From", "To", "Call-ID", "CSeq", "Record-Route"]);

export const REASONS: Record<number, string> = {
  100: "Trying",
  180: "Ringing",
  200: "OK",
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  413: "Request Entity Too Large",
  415: "Unsupported Media Type",
  420: "Bad Extension",
  422: "Session Interval Too Small",
  481: "Call/Transaction Does Not Exist",
  487: "Request Terminated",
  488: "Not Acceptable Here",
  500: "Server Internal Error",
  503: "Service Unavailable",
  505: "Version Not Supported",
  513: "Message Too Large",
};

export interface ResponseParts {
  reason?: string;
  /** Added to the To when it has none (not on 100, section 8.2.6.2). */
  toTag?: string;
  headers?: Header[];
  body?: Uint8Array;
}

export function responseTo(
  request: SipRequest,
  status: number,
  parts: ResponseParts = {},
): SipResponse {
  const headers: Header[] = [];
  for (const h of request.headers) {
    if (!COPIED.has(h.name)) continue;
    // Record-Route is copied only into responses that can make a dialog (section 12.1.1).
    if (h.name === "Record-Route" && (status < 101 || status > 299)) continue;
    if (h.name === "To" && status !== 100 && parts.toTag && tagOf(h.value) === undefined) {
      headers.push({ name: "To", value: `${h.value};tag=${parts.toTag}` });
    } else headers.push({ ...h });
  }
  headers.push(...(parts.headers ?? []));
  return {
    kind: "response",
    status,
    reason: parts.reason ?? REASONS[status] ?? "Unknown",
    headers,
    body: parts.body ?? new Uint8Array(),
  };
}

/** A fresh random token for tags and branches (section 19.3 wants 32 bits of randomness). */
export function randomToken(bytes = 8): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(raw, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Our Contact at host:port, on the transport the dialog started on (section 12.1.1). */
export function contactFor(announced: string, port: number, request: SipRequest): Header {
  const host = announced.includes(":") ? `[${announced}]` : announced;
  const tcp = parseVia(headerList(request, "Via")[0] ?? "")?.transport === "TCP";
  return { name: "Contact", value: `<sip:${host}:${port}${tcp ? ";transport=tcp" : ""}>` };
}
