// The RTVI wire names the worker, the page (web/call/) and the caller simulator (caller/) share:
// the message label and version, the worker's call-ended notice and the page's client-latency
// report (browser-client-protocol.md §3). Here, with the other wire definitions, so that the page
// and the simulator need no media code; the worker's side of the protocol is media/rtvi/.
export const RTVI_LABEL = "rtvi-ai";
export const RTVI_VERSION = "2.1.0";

/**
 * The worker's last word to the page before it closes a call it ends itself: a server-message
 * `{type: "call-ended", data: {status, reason}}` (the session's end status and reason, as the
 * console shows them). A server-message because the Pipecat client drops message types it does
 * not know; brain actions share that channel as `{type, data}`, so brains should not name an
 * action "call-ended". A page that hangs up itself, or loses the connection, gets none.
 */
export const CALL_ENDED = "call-ended";

export interface CallEnded {
  type: typeof CALL_ENDED;
  data: { status: string; reason: string };
}

export function callEnded(status: string, reason: string): CallEnded {
  return { type: CALL_ENDED, data: { status, reason } };
}

/** The notice's data when `message` (a server-message's data) is one, else undefined. */
export function readCallEnded(message: unknown): CallEnded["data"] | undefined {
  const m = message as Partial<CallEnded> | null;
  if (typeof m !== "object" || m === null || m.type !== CALL_ENDED) return undefined;
  const d = m.data as Partial<CallEnded["data"]> | null | undefined;
  if (typeof d?.status !== "string" || typeof d.reason !== "string") return undefined;
  return { status: d.status, reason: d.reason };
}

/**
 * The page's (or caller simulator's) own measurement of a turn: the end of the caller's speech
 * to the first bot audio it heard, from its microphone and the received track. It travels as a
 * `client-message` with this reserved `t` because that is what the Pipecat client can send
 * (`sendClientMessage`/`sendClientRequest`; it has no way to send a new message type), and an
 * unknown type would get an "Unsupported type" error-response from Pipecat-compatible servers.
 * The worker keeps it on the turn record and never forwards it to the brain.
 */
export const CLIENT_LATENCY_T = "client-latency";
/** The largest figure accepted (ms): anything longer is not a reply being waited for. */
export const MAX_CLIENT_LATENCY_MS = 60_000;
const MAX_TURN_ID_CHARS = 128;

export interface ClientLatency {
  /** The turn it belongs to; absent: the latest speech turn (pages do not see turn ids). */
  turn_id?: string;
  end_of_speech_to_audio_ms: number;
}

/** A client-latency message's `d`, checked: the value, or why it is refused. */
export function readClientLatency(d: unknown): ClientLatency | { problem: string } {
  if (typeof d !== "object" || d === null || Array.isArray(d)) {
    return { problem: "client-latency needs an object d" };
  }
  const v = d as Record<string, unknown>;
  const ms = v.end_of_speech_to_audio_ms;
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > MAX_CLIENT_LATENCY_MS) {
    return {
      problem: `end_of_speech_to_audio_ms must be a number from 0 to ${MAX_CLIENT_LATENCY_MS}`,
    };
  }
  if (v.turn_id === undefined || v.turn_id === null) return { end_of_speech_to_audio_ms: ms };
  if (typeof v.turn_id !== "string" || v.turn_id === "" || v.turn_id.length > MAX_TURN_ID_CHARS) {
    return { problem: `turn_id must be a string of 1 to ${MAX_TURN_ID_CHARS} characters` };
  }
  return { turn_id: v.turn_id, end_of_speech_to_audio_ms: ms };
}

/**
 * A typed turn: what the Pipecat client's `sendText(content, options)` sends, an RTVI
 * `send-text` with data `{content, options}` (options `{}` by default). The worker makes it a
 * caller turn, delivered to the brain as a UserTurn marked typed (docs/decisions.md "Typed turns").
 */
export const SEND_TEXT = "send-text";

export interface SendTextOptions {
  /** Pipecat's default, and the only value served: the turn runs now, over the bot. */
  run_immediately?: boolean;
  /** Pipecat's default, and the only value served: the reply is spoken. */
  audio_response?: boolean;
}

export interface SendText {
  content: string;
  options?: SendTextOptions;
}

/** A send-text message's data, checked: the text of the turn (trimmed), or why it is refused. */
export function readSendText(data: unknown): { text: string } | { problem: string } {
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { problem: "send-text needs an object data with a string content" };
  }
  const { content, options } = data as Record<string, unknown>;
  if (typeof content !== "string") return { problem: "send-text content must be a string" };
  const text = content.trim();
  if (!text) return { problem: "send-text content is empty" };
  if (options === undefined || options === null) return { text };
  if (typeof options !== "object" || Array.isArray(options)) {
    return { problem: "send-text options must be an object" };
  }
  for (const name of ["run_immediately", "audio_response"]) {
    const value = (options as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value !== "boolean") {
      return { problem: `send-text options.${name} must be a boolean` };
    }
    // Text-only replies and queued text are not served: a refusal, not a silently different call.
    if (!value) return { problem: `send-text options.${name} false is not supported` };
  }
  return { text };
}
