// How a message finds its transaction or dialog (RFC 3261 sections 12 and 17.2.3), and the Via a
// received request is stamped with (section 18.2.1, RFC 3581).
import { parseVia, tagOf } from "./headers.ts";
import { header, headerList, type SipRequest, type SipResponse } from "./message.ts";
import type { Peer } from "./udp.ts";

/**
 * Section 17.2.3: branch, sent-by and method (ACK counts as the INVITE it acknowledges). A branch
 * without the RFC 3261 cookie falls back to the RFC 2543 fields.
 */
export function transactionKey(request: SipRequest, method = request.method): string {
  const top = headerList(request, "Via")[0] ?? "";
  const via = parseVia(top);
  const branch = via?.params.get("branch") ?? "";
  const m = method === "ACK" ? "INVITE" : method;
  if (branch.startsWith("z9hG4bK")) return `${branch}|${via?.host}:${via?.port ?? 5060}|${m}`;
  const cseq = header(request, "CSeq")?.split(/\s+/)[0];
  return `2543|${header(request, "Call-ID")}|${tagOf(header(request, "From"))}|${cseq}|${top}|${m}`;
}

export function dialogKey(request: SipRequest): string {
  return `${header(request, "Call-ID")};${tagOf(header(request, "To"))}`;
}

/** Section 18.2.1: the top Via learns the source address (received) and port (rport, RFC 3581). */
export function stampVia(request: SipRequest, from: Peer): void {
  const index = request.headers.findIndex((h) => h.name === "Via");
  if (index < 0) return;
  const [top, ...rest] = headerList({ ...request, headers: [request.headers[index]] }, "Via");
  const via = parseVia(top ?? "");
  if (!via) return;
  let stamped = top;
  if (via.host !== from.address) stamped += `;received=${from.address}`;
  if (via.params.has("rport")) stamped = stamped.replace(/;rport(?=;|$)/i, `;rport=${from.port}`);
  request.headers[index] = { name: "Via", value: [stamped, ...rest].join(", ") };
}

/** A response's client transaction: its top Via's branch and its CSeq's method (17.1.3). */
export function clientKey(response: SipResponse): string {
  const branch = parseVia(headerList(response, "Via")[0] ?? "")?.params.get("branch") ?? "";
  const method = header(response, "CSeq")?.trim().split(/\s+/)[1] ?? "";
  return `${branch}|${method}`;
}
