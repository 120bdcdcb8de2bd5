// DTMF by SIP INFO, for trunks that send key presses in the dialog instead of RFC 4733 events.
// Two bodies are in use and no RFC defines either (RFC 6086 left legacy INFO usages as they
// were): Cisco's application/dtmf-relay ("Signal=5" and "Duration=160" lines, what Asterisk,
// FreeSWITCH and SIPp send) and application/dtmf (the key alone). Signal values 10-15 are the
// RFC 4733 event codes (*, #, A-D), which some gateways send instead of the character.
import type { DtmfDigit } from "../phone/line.ts";
import type { SipRequest, SipResponse } from "../../sip/message.ts";
import { header } from "../../sip/message.ts";
import { responseTo } from "../../sip/response.ts";

/** The INFO bodies taken, for the Accept of a 415. */
export const INFO_TYPES = "application/dtmf-relay, application/dtmf";

const EVENTS = "0123456789*#ABCD";

/** A key as the body names it: the character, or an RFC 4733 event code 0-15. */
function key(value: string): string | undefined {
  const v = value.trim().toUpperCase();
  if (/^\d{1,2}$/.test(v)) return EVENTS[Number(v)];
  return v.length === 1 && EVENTS.includes(v) ? v : undefined;
}

/** The digit an INFO body carries; a string is why the body is unreadable; null: not a DTMF type. */
export function readDtmfInfo(
  contentType: string | undefined,
  body: Uint8Array,
): DtmfDigit | string | null {
  const type = contentType?.split(";")[0].trim().toLowerCase();
  const text = new TextDecoder().decode(body);
  if (type === "application/dtmf") {
    const digit = key(text);
    return digit ? { digit, durationMs: 0 } : "application/dtmf body is not a key";
  }
  if (type !== "application/dtmf-relay") return null;
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
  }
  const digit = key(fields.get("signal") ?? "");
  if (!digit) return "dtmf-relay Signal is not a key";
  // Duration is in milliseconds; a body without one says nothing about it (0).
  const duration = Number(fields.get("duration") ?? "0");
  return { digit, durationMs: Number.isFinite(duration) && duration >= 0 ? duration : 0 };
}

/**
 * The answer to an INFO in a dialog and the key it carried: 200 for a key or an empty INFO
 * (some trunks send those as keep-alives), 400 for a DTMF body without a key, 415 otherwise.
 */
export function answerInfo(request: SipRequest): { response: SipResponse; digit?: DtmfDigit } {
  if (request.body.length === 0) return { response: responseTo(request, 200) };
  const read = readDtmfInfo(header(request, "Content-Type"), request.body);
  if (read === null) {
    const accept = [{ name: "Accept", value: INFO_TYPES }];
    return { response: responseTo(request, 415, { headers: accept }) };
  }
  if (typeof read === "string") {
    return { response: responseTo(request, 400, { reason: `Bad Request (${read})` }) };
  }
  return { response: responseTo(request, 200), digit: read };
}
