// What the SIP UAS (uas.ts) and the worker say to each other: who takes a call, how an INVITE is
// refused, and the call events the worker follows.
import type { SipClock, SipTimers } from "../../sip/clock.ts";
import type { Header, SipRequest } from "../../sip/message.ts";
import type { AnswerChoice } from "./sdp.ts";
import type { RtpPort } from "./rtp_port.ts";
import type { DtmfDigit } from "../phone/line.ts";
import type { RefusalLog } from "./refusal_log.ts";

/** What an INVITE leads to: the agent that takes the call. */
export interface PhoneTarget {
  agentId: string;
}
/** An INVITE the lookup refuses: the status and reason phrase it is answered with. */
export interface SipRefusal {
  refuse: number;
  reason: string;
  headers?: Header[];
}
/** Who takes a call to `dialled`; undefined is 404. Given the INVITE (its Request-URI's params). */
export type NumberLookup = (
  dialled: string,
  invite: SipRequest,
) => PhoneTarget | SipRefusal | undefined | Promise<PhoneTarget | SipRefusal | undefined>;

export type CallEndReason =
  | "caller_hung_up"
  | "caller_cancelled"
  | "no_ack"
  /** The caller stopped refreshing an RFC 4028 session: our BYE ended it. */
  | "session_expired"
  | "shutdown"
  | "hung_up_here";

export type CallEvent =
  | { type: "invited"; callId: string; dialled: string; caller?: string }
  | { type: "refused"; callId: string; status: number; reason: string }
  | {
    type: "answered";
    callId: string;
    target: PhoneTarget;
    media: AnswerChoice;
    rtp: RtpPort;
    /** The address the INVITE came from: its media is heard as the SDP's c= address is. */
    signalling: string;
  }
  | { type: "confirmed"; callId: string }
  /** A re-INVITE changed the media: `media.direction` is ours (recvonly/inactive: on hold). */
  | { type: "media"; callId: string; media: AnswerChoice }
  /** A key the trunk sent by SIP INFO in the dialog (dtmf_info.ts). */
  | { type: "dtmf"; callId: string; digit: DtmfDigit }
  | { type: "ended"; callId: string; reason: CallEndReason };

export interface UasOptions {
  /** Address to bind (and to announce, unless publicAddress is set). */
  host: string;
  /** Address announced in Contact and SDP c= when the worker is behind NAT (SIP_PUBLIC_ADDRESS). */
  publicAddress?: string;
  /** Opens the RTP port an answer names (default: one that only counts packets). */
  openMedia?: (host: string) => Promise<RtpPort>;
  /**
   * Called once the offer is answerable, before 180: may still refuse (e.g. the session was taken
   * meanwhile). Where admission writes (spends a token), it writes only here.
   */
  accept?: (callId: string, target: PhoneTarget) => Promise<SipRefusal | undefined>;
  /**
   * Called once the 180 is sent, with what the answer will be: the call is prepared while it
   * rings (ringing_call.ts), and the 200 waits for this to settle (it bounds its own wait).
   */
  ringing?: (call: Omit<Extract<CallEvent, { type: "answered" }>, "type">) => Promise<void>;
  /** 0 (the default) for any free port. */
  port?: number;
  lookup: NumberLookup;
  /** How long to ring (180) before answering; a CANCEL can arrive meanwhile. */
  ringingMs?: number;
  clock?: SipClock;
  timers?: SipTimers;
  onEvent?: (event: CallEvent) => void;
  /** Where refused INVITEs and foreign in-dialog requests are logged (default: the "sip" log). */
  refusals?: RefusalLog;
}
