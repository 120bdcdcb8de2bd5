// Outbound calls (issue 34): what the API and the worker agree on when the service places a call.
// The API checks the request (api/dial/), reserves the session on a node as connect does and
// mints its token; then it posts a WorkerDial to that node's `/sessions/{id}/dial` with the token
// as its Bearer. The worker places the call (media/sip/uac.ts over a SIP trunk) and from then on
// writes the session's dial state and its end (db/dial.ts, db/sessions.ts finishSession).

/** A phone number as E.164: a plus, then 8 to 15 digits, the first not 0 (ITU-T E.164 §6). */
export const E164 = /^\+[1-9][0-9]{7,14}$/;

/** How far an outbound call got; written on the session as it happens (sessions.dial_state). */
export type DialState = "dialing" | "ringing" | "answered";

/**
 * How an outbound call ended before it became a conversation. `no_answer`, `busy`, `rejected`
 * and `machine` end the session `ended` (the service did its job; the callee did not talk);
 * `dial_failed` ends it `failed` (the trunk refused or never answered: 404, 5xx, auth refused).
 */
export type DialEndReason = "no_answer" | "busy" | "rejected" | "machine" | "dial_failed";

export const DIAL_END_REASONS: readonly DialEndReason[] = [
  "no_answer",
  "busy",
  "rejected",
  "machine",
  "dial_failed",
];

/**
 * What to do about an answering machine: `off` treats every answer as the callee; `hang_up`
 * ends a machine-answered call `machine`; `leave_message` waits for the beep and lets the brain
 * speak (the brain is told `machine_detected`, then `beep`).
 */
export type MachineDetection = "off" | "hang_up" | "leave_message";

/** Ring timeout bounds, seconds: a CANCEL is sent when the callee has not answered by then. */
export const RING_TIMEOUT_DEFAULT_SECONDS = 30;
export const RING_TIMEOUT_MIN_SECONDS = 5;
export const RING_TIMEOUT_MAX_SECONDS = 120;

/** How the worker reaches the network over a SIP trunk. */
export interface DialTrunk {
  trunk_id: string;
  /** host:port of the trunk's SIP edge (port 5060 when the operator gave none). */
  address: string;
  transport: "udp" | "tcp";
  /** Digest credentials for the trunk's 401/407 challenges; absent when it does not challenge. */
  username?: string;
  /** Decrypted by the API for this one request; the worker never stores or logs it. */
  password?: string;
}

/** The body of `POST {worker}/sessions/{session_id}/dial` (Bearer: the session's token). */
export interface WorkerDial {
  /** E.164. */
  to: string;
  /** E.164, a number the workspace owns (its phone_numbers row). */
  from: string;
  trunk: DialTrunk;
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
}

/**
 * The worker's answer: 202 `{ session_id }` once the INVITE is on its way (the worker now owns the
 * session's end), or an error `{ error: { code, message } }` with nothing dialled.
 */
export interface WorkerDialAccepted {
  session_id: string;
}
