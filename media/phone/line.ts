// A phone line's words: who carries it, a key press, how it ends, a transfer's outcome. The line
// itself is a CallLine (media/call/line.ts), as SIP with RTP (media/sip/sip_line.ts) and each
// carrier's media stream (carriers/stream_line.ts) implement it.
import type { StreamCarrier } from "../../common/carrier.ts";

/** Who carries the call: SessionStart's `phone.carrier` ("sip" is a kind of line, not a carrier). */
export type Carrier = "sip" | StreamCarrier;

/** One RFC 4733 / SIP INFO / provider / in-band DTMF key press, reported once, when it ends. */
export interface DtmfDigit {
  /** "0"-"9", "*", "#", "A"-"D". */
  digit: string;
  durationMs: number;
  /** How it was heard, when not signalled: "tone", DTMF tones in the caller's audio. */
  via?: "tone";
}

/** How a phone call ended, from the line's side: the session's end reason. */
export type LineEndReason =
  | "caller_hung_up"
  | "transferred"
  | "no_ack"
  | "session_expired"
  | "media_timeout"
  | "shutdown"
  | "carrier_error";

export interface TransferResult {
  ok: boolean;
  /** Why not, or what the carrier said (e.g. "REFER answered 403 Forbidden"). */
  detail: string;
  /** TransferFailed.reason when the line knows it; else read from detail (call/transfer.ts). */
  reason?: "no_answer" | "busy" | "declined" | "refused" | "failed";
}
