// The session log's events, declared once: for each source, each kind it writes and the data it
// carries (as LiveKit agents-js declares its session events in `voice/events.ts`). The worker
// writes them (media/call/session_log.ts), the console shows them, and the record's readers
// (replay, the scenario runner) read them by kind, so a misspelt kind or field fails `deno check`.
// The stored row is unchanged: `{ at, source, kind, data }`, data as JSON (docs/session-record.md).
// Here, not in media/, because the control plane reads them and may not import the worker.
import type { BrainFrameKind, ServiceFrameKind } from "../proto/frames.ts";
import type { ClientLatency } from "../proto/rtvi.ts";

/** An event that carries nothing: stored as `{}`. */
export type Empty = Record<string, never>;

/** A brain-protocol frame as logged: the decoded body (brain.proto) with its sequence number. */
export type ToBrainFrame = { seq: number } & Record<string, unknown>;
/** A brain frame as logged: the decoded body with its sequence number and send timestamp. */
export type FromBrainFrame = { seq: number; timestamp_ms: number } & Record<string, unknown>;

/** Why a call failed, each logged as a `worker` event of that kind (and the call's end reason). */
export const CALL_FAILURES = [
  "brain_unreachable",
  "brain_connect_timeout",
  "brain_disconnected",
  "brain_protocol_error",
  "brain_frame_too_large",
  "brain_unresponsive",
  "engine_unavailable",
  "recognition_failed",
  "synthesis_failed",
  "vad_failed",
] as const;
export type CallFailure = typeof CALL_FAILURES[number];

export const isCallFailure = (kind: string): kind is CallFailure =>
  (CALL_FAILURES as readonly string[]).includes(kind);

/** Whether a logged event is a failed call's reason (a `worker` event of a CallFailure kind). */
export const isFailureEvent = <E extends { source: string; kind: string }>(
  e: E,
): e is Extract<E, { source: "worker"; kind: CallFailure }> =>
  e.source === "worker" && isCallFailure(e.kind);

/** A failed call's reason: what went wrong and, for a brain failure, the URL dialled. */
export interface FailureData {
  detail: string;
  brain_url?: string;
}

/** What the worker itself saw and did. */
export type WorkerEvents = { [K in CallFailure]: FailureData } & {
  offer_accepted: { pc_id: string };
  peer_restarted: { pc_id: string };
  dtls_connected: { by: "connected" | "chat_open" };
  call_started:
    | { about: unknown }
    | { carrier: string; from: string; to: string; call_id: string };
  typed_text: { text: string };
  speech_started: { onset_ms: number; at_ms: number };
  speech_stopped:
    | { at_ms: number; speech_ms: number }
    | { silence_ms: number; window_ms: number; words: boolean };
  final_text: { text: string; audio_ms: number; engine: string };
  barge_in: { turn_id: string; window_ms?: number; typed?: boolean };
  turn_cancelled: { turn_id: string; reason: "superseded" };
  turn_speculative: { turn_id: string };
  turn_confirmed: { turn_id: string; units: number };
  speculation_dropped: { turn_id: string; units: number };
  greeting_timeout: { after_ms: number };
  greeting_released: { why: string; waited_ms: number };
  /** An outbound call's answering-machine decision (media/call/machine_watch.ts). */
  machine_detected: { outcome: "human" | "machine"; at_ms: number; why: string };
  /** After a machine: its beep ended (heard), or none is coming (why). */
  beep: { at_ms: number; heard: boolean; hz: number; why: string };
  reply_timeout: { turn_id: string; after_ms: number };
  engine_fallback: { leg: "recognition" | "synthesis"; from: string; to: string; reason: string };
  synthesis_error: { unit_id: string; error: string };
  unit_refused: {
    turn_id: string;
    unit_id: string;
    reason: "queue_full";
    queued_units: number;
    queued_chars: number;
  };
  unit_dropped: { turn_id: string; unit_id: string; reason: string };
  bot_paused: { turn_id: string; window_ms: number };
  bot_resumed: { turn_id: string; text: string };
  config_applied: { changed: string[]; config: unknown };
  config_refused: { fields: string[]; config: unknown } | { error: string };
  end_requested: { reason: string };
  transfer_requested: { target: string; warm?: boolean };
  transfer_refused: { target: string; detail: string };
  transferred: { target: string; detail: string };
  transfer_failed: { target: string; detail: string; reason?: string };
  brain_silent: { silent_ms: number };
  brain_back: { silent_ms: number };
  caller_audio: {
    received: number;
    lost: number;
    late: number;
    duplicates: number;
    jitter_ms: number;
    depth: number;
    unfilled: number;
    recovered: number;
    concealed: number;
  };
  last_messages: { delivered: boolean; ms: number };
  recording_written: { url: string | null; seconds: number };
  /** Issue 37: the recording and its transcript reached the agent's bucket (hooks attach here). */
  recording_stored: {
    url: string;
    wav_key: string;
    json_key: string;
    bytes: number;
    attempts: number;
  };
  recording_upload_failed: { error: string; attempts: number; retry_in_seconds: number };
  /** Whether the call cancels the bot's echo (issue 35): the agent's setting and the outcome. */
  echo_cancellation: { setting: string; on: boolean };
  /** The canceller could not start (libspeexdsp missing): the call runs without it. */
  echo_unavailable: { detail: string };
  /** At the end: frames the canceller processed, and how often the reference was re-paired. */
  echo_cancelled: { frames: number; realigned: number; gated: number };
  call_ended: { status: string; reason: string };
  end_not_recorded: {
    status: string;
    reason: string;
    recorded_status: string | null;
    recorded_reason: string | null;
    ended_seconds_ago: number;
    recognised_seconds: number;
    synthesized_characters: number;
    by_engine: Record<string, unknown>;
    recording_url: string | null;
  };
  log_events_dropped: {
    count: number;
    by_source: Record<string, number>;
    /** Written as a Date, stored and read back as its ISO string. */
    first_at: Date | string;
    last_at: Date | string;
  };
};

/** A chat frame RTVI refused or ignored: why, its length and its first characters. */
export interface RefusedChat {
  refused: string;
  chars: number;
  excerpt: string;
}

/** What the page sent on the chat channel. */
export interface PageEvents {
  /** The frame as it came, or what is kept of a refused one. */
  chat: string | RefusedChat;
  client_latency: ClientLatency;
  /** The page's own data, as it sent it (forwarded to the brain). */
  "client-message": unknown;
  "ui-event": unknown;
}

/** What the worker sent the page: each chat frame's text. */
export interface ToPageEvents {
  chat: string;
}

/** What a page is told during a call (RTVI server messages, media/rtvi/observer.ts). */
export interface RtviEvents {
  "user-started-speaking": Empty;
  "user-stopped-speaking": Empty;
  "bot-started-speaking": Empty;
  "bot-stopped-speaking": Empty;
  "user-transcription": { text: string; final: boolean; timestamp: string; user_id: string };
  "bot-output": {
    text: string;
    aggregated_by: "sentence";
    will_be_spoken: boolean;
    spoken_status: "new" | "in-progress" | "completed";
    spoken_progress: { accumulated_text: string; remaining_text: string };
  };
  "server-message": { type: unknown; data: unknown };
  error: { error: string; message: string; fatal: boolean };
}

/** A phone call: what a page would have been told (RtviEvents), and the line's own events. */
export interface PhoneEvents extends RtviEvents {
  /** `digit` is "*" while the keypad is sensitive; `via: "tone"` for an in-band DTMF tone. */
  dtmf: { digit: string; duration_ms: number; via?: "tone" };
  dtmf_dropped: { count: number; total: number; limit_per_second: number };
  transfer: { target: string; warm?: boolean };
  hang_up_failed: { detail: string };
  /** The line's counts at the end (RTP packets, bytes, ...). */
  line: Record<string, number>;
}

/** A SIP call's dialogue. */
export interface SipEvents {
  invite: { from: string; to: string; call_id: string };
  answered: { codec: string; dtmf_payload_type: number | null; remote: string };
  confirmed: Empty;
  media: { direction: string; codec: string };
  /** The key itself is the phone/dtmf entry's (masked while the keypad is sensitive). */
  info_dtmf: { duration_ms: number };
  refer: { refer_to: string };
  refer_outcome: { ok: boolean; detail: string };
  bye: Empty;
  bye_answered: { answer: string };
  media_timeout: Empty;
  ended: { reason: string };
  /** The worker placed a call over a trunk (issue 34). */
  dial: {
    to: string;
    from: string;
    trunk_id: string;
    ring_timeout_seconds: number;
    machine_detection: string;
    call_id: string;
  };
  ringing: Empty;
  dial_ended: { reason: string; sip: string };
  /** A warm transfer (issue 35): the caller held, the person's call, the whisper, the join. */
  hold: { on: boolean };
  warm_dial: { target: string; uri: string; call_id: string; ring_timeout_ms: number };
  warm_ringing: Empty;
  /** The person's call's own line events (its bye, its end), apart from the caller's. */
  warm_leg: { event: string };
  warm_answered: { codec: string; remote: string };
  warm_failed: { reason: string; sip: string };
  whisper_played: { ms: number };
  bridged: { call_id: string };
  bridge_ended: { by: "caller" | "person" | "worker"; bridged_ms: number };
}

/** Frames to the brain, by frame type. */
export type ToBrainEvents = { [K in ServiceFrameKind]: ToBrainFrame };

/** Frames from the brain by frame type, and what the worker could not take as one. */
export type FromBrainEvents = { [K in BrainFrameKind]: FromBrainFrame } & {
  text_frame: { text: string };
  undecodable: { bytes: number };
  frame_too_large: { bytes: number; limit: number };
  bad_frame: { error: string };
};

/** Every event of the session log: source → kind → data. */
export interface SessionEvents {
  worker: WorkerEvents;
  page: PageEvents;
  to_page: ToPageEvents;
  phone: PhoneEvents;
  sip: SipEvents;
  to_brain: ToBrainEvents;
  from_brain: FromBrainEvents;
}

export type SessionSource = keyof SessionEvents;
export type SessionEventKind<S extends SessionSource> = keyof SessionEvents[S] & string;
export type SessionEventData<S extends SessionSource, K extends SessionEventKind<S>> =
  SessionEvents[S][K];

/** What writes the session log (media/call/session_log.ts's SessionLog). */
export interface SessionEventWriter {
  add<S extends SessionSource, K extends SessionEventKind<S>>(
    source: S,
    kind: K,
    data: SessionEventData<S, K>,
  ): void;
}

/** Writes the events of one source (the SIP line's dialogue). */
export type SessionEventNote<S extends SessionSource> = <K extends SessionEventKind<S>>(
  kind: K,
  data: SessionEventData<S, K>,
) => void;

/**
 * One event as the record holds it, discriminated by source and kind: checking both narrows the
 * data. `At` is a Date from the database, an ISO string in the API's JSON.
 */
export type LoggedEvent<At = Date> = {
  [S in SessionSource]: {
    [K in SessionEventKind<S>]: { at: At; source: S; kind: K; data: SessionEvents[S][K] };
  }[SessionEventKind<S>];
}[SessionSource];

/** Whether `e` is the logged event of this source and kind (its data then typed). */
export function isEvent<
  E extends { source: string; kind: string },
  S extends E["source"],
  K extends Extract<E, { source: S }>["kind"],
>(e: E, source: S, kind: K): e is Extract<E, { source: S; kind: K }> {
  return e.source === source && e.kind === kind;
}
