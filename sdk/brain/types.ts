// The public shapes of the brain SDK: what handlers receive and may return.
import type { ConfigJson } from "./config.ts";
import type { CollectDigitsOptions, CollectedDigits } from "./keypad.ts";

/** A JSON object, as parsed from the session's init. */
export type JsonObject = Record<string, unknown>;

/**
 * One call, as the brain sees it. Handlers of the same call get the same object. Its verbs called
 * from a speculative turn not yet confirmed (`turn.speculative`) are held until it is confirmed
 * and dropped if it is cancelled; arguments are checked at once.
 */
export interface Session {
  /** The session id (`session_id` of the connect request). */
  readonly id: string;
  /** The agent the session was created for. */
  readonly agentId: string;
  /** The session's `init` object from the connect request, parsed; `{}` when none was given. */
  readonly init: JsonObject;
  /** The effective config: the worker's at session start, then every `configure` applied. */
  readonly config: ConfigJson;
  /** What the caller actually heard so far, in order (replaced by the final list at Finalize). */
  readonly heard: readonly HeardText[];
  /** Who rang and how, on a phone call; `null` on a web call. */
  readonly phone: PhoneInfo | null;
  /**
   * Set when this session replays a recorded one (`deno task replay`): nobody is on the line and
   * `id` is the replay's own. Keep side effects on real systems (bookings, payments) out of it.
   * `null` on a real call.
   */
  readonly replay: ReplayInfo | null;
  /**
   * The call's trace (W3C Trace Context), for the brain's own spans to join it:
   * `propagation.extract(ROOT_CONTEXT, session.traceContext)` with `@opentelemetry/api`
   * (docs/traces.md). `{}` when the worker exports no traces.
   */
  readonly traceContext: TraceContext;
  /** True once the session has ended (End received or socket closed); sends are then dropped. */
  readonly ended: boolean;
  /**
   * Changes voice, language or idle timeout now (sends a Config frame). Enum values are given by
   * name, e.g. `{ tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" } }`.
   * @throws Error for an unknown enum name, unknown field or out-of-range number; nothing is sent.
   */
  configure(config: ConfigJson): void;
  /**
   * Sends a typed action to the page, which receives it as an RTVI `server-message`
   * `{ type, data }`. `data` must be JSON-serialisable; omitted, it is `null`.
   */
  dispatch(type: string, data?: unknown): void;
  /** Asks the service to end the call (sends EndSession once; later calls do nothing). On a phone call the service hangs up (SIP BYE). */
  end(reason?: string): void;
  /**
   * Hands a phone call to `target`: a `tel:` or `sip:` URI or an E.164 number ("+918041234567").
   * The service lets the bot finish what it is saying, then transfers (SIP REFER); when that
   * works the session ends with reason `"transferred"`, when not `onTransferFailed` says why and
   * the call goes on. On a web call the service refuses it the same way. With `whisper` it is a
   * warm transfer: the caller hears hold audio while the service calls the person, speaks the
   * whisper to them only, then joins the two (see TransferOptions).
   * @throws Error for an empty target or a bad ringTimeoutMs; nothing is sent.
   */
  transfer(target: string, options?: TransferOptions): void;
  /**
   * Speaks `text` outside a turn: on a key press, a page message, a timer or an outside event. The
   * service gives it a turn of its own and speaks it as one unit under the rules of any reply
   * (barge-in cuts it, `onHeard` reports it), but only when the floor is free: while the caller
   * speaks, a reply is awaited or playing, or the call is ending, it is refused, never queued.
   * Resolves once it is spoken or cut off (with what the caller heard) or refused (with why);
   * it never rejects, so it may be called without awaiting.
   * @throws Error for text that is not a non-empty string; nothing is sent.
   */
  say(text: string): Promise<SayOutcome>;
  /**
   * Collects the caller's keys (a menu choice, an account number, a PIN): up to `maxDigits`, or
   * until the `terminator` key, with a per-digit and a total timeout; an optional `prompt` is said
   * first and keys pressed during it count. Keys a collection takes do not reach `onDtmf`.
   * Resolves with the digits and why it stopped (`"ended"` when the call ends first); never
   * rejects. See {@link CollectDigitsOptions}; with `sensitive` never log `digits`.
   * @example
   * const got = await session.collectDigits({ prompt: "Key in your account number, then hash.",
   *   maxDigits: 12, terminator: "#" });
   * if (got.reason === "terminator") lookUp(got.digits);
   * @throws Error for bad options or while another collection runs; nothing is sent.
   */
  collectDigits(options: CollectDigitsOptions): Promise<CollectedDigits>;
}

/** How a `session.say(...)` went. */
export interface SayOutcome {
  /** The turn the service gave the speech; `""` when it was refused. */
  readonly turnId: string;
  /** What the caller heard of it (all of it, or up to where they cut in). */
  readonly heard: string;
  /** True when the caller cut it off (barge-in) or the call ended while it played. */
  readonly cutOff: boolean;
  /** Why the service refused it ("the caller holds the floor", ...); absent when it was spoken. */
  readonly refused?: string;
}

/** The caller started or stopped speaking (only with `config.events.speech`). */
export interface UserSpeech {
  /** True when the caller started, false when their utterance ended. */
  readonly speaking: boolean;
  /** The bot was speaking when the caller started: a barge-in (a Cancel) may follow. */
  readonly overBot: boolean;
}

/** The recogniser's interim text while the caller speaks (only with `config.events.interim_text`). */
export interface InterimText {
  readonly text: string;
}

/** One turn's latency steps, once it is over (only with `config.events.turn_metrics`). */
export interface TurnMetrics {
  readonly turnId: string;
  /** `"greeting"`, `"speech"`, `"typed"`, `"idle"` or `"say"`. */
  readonly trigger: string;
  /**
   * Milliseconds per step, as the session record has them: `end_of_turn`, `to_brain`, `brain`,
   * `synthesis`, `end_to_first_audio`, `recognition`; a step not measured on the turn is absent.
   */
  readonly latencyMs: Readonly<Record<string, number>>;
  /** The caller cut the reply off. */
  readonly interrupted: boolean;
}

/** W3C Trace Context headers' values (SessionStart's `traceparent`, `tracestate`), set ones only. */
export interface TraceContext {
  traceparent?: string;
  tracestate?: string;
}

/** A phone call's caller, dialled number and carrier (SessionStart's `phone`). */
export interface PhoneInfo {
  /** The caller's number (E.164 when the carrier gives one); `""` when withheld. */
  readonly from: string;
  /** The number the caller dialled. */
  readonly to: string;
  /** `"sip"`, `"twilio"`, `"plivo"` or `"exotel"`. */
  readonly carrier: string;
  /** The carrier's id for the call (SIP Call-ID, Twilio CallSid, ...). */
  readonly callId: string;
  /**
   * `"outbound"` when the service placed the call (calls.dial): `from` is the service's number,
   * `to` the callee's. `"inbound"` when the caller rang.
   */
  readonly direction: "inbound" | "outbound";
  /**
   * An outbound call's answering-machine outcome once detected (`onMachineDetected` says when);
   * null until then, on an inbound call, and with detection off.
   */
  readonly machineDetection: "human" | "machine" | null;
}

/**
 * Who answered an outbound call placed with `machine_detection` `hang_up` or `leave_message`,
 * told once, before the greeting plays (docs/machine-detection.md, "In a call").
 */
export interface MachineDetected {
  /** `"human"`: the greeting plays now. `"machine"`: with hang_up the call ends (reason
   * `"machine"`); with leave_message nothing is spoken until `onBeep`. */
  readonly outcome: "human" | "machine";
  /** Audio time since the answer when it was decided, in milliseconds. */
  readonly atMs: number;
  /** The rule that decided: `"short_greeting"`, `"long_greeting"`, `"tone"`, `"silence"`, ... */
  readonly why: string;
}

/**
 * A leave_message call's machine now records: its beep ended (`heard`), or none is coming. The
 * greeting the brain gave at session start plays from here, into the recording.
 */
export interface Beep {
  /** Audio time since the answer, in milliseconds: the beep's end, or when none was expected. */
  readonly atMs: number;
  /** True when a beep was heard; false when none came (`why`: `"silence"` or `"timeout"`). */
  readonly heard: boolean;
  /** The beep's pitch in Hz; 0 when none was heard. */
  readonly hz: number;
  /** `""` when heard; why none is expected otherwise. */
  readonly why: string;
}

/** A replay of a recorded session (SessionStart's `replay`). */
export interface ReplayInfo {
  /** The id of the recorded session being replayed. */
  readonly originalSessionId: string;
}

/** A key the caller pressed on a phone call, reported once it is released. */
export interface Dtmf {
  /** "0"-"9", "*", "#", "A"-"D". */
  readonly digit: string;
  readonly durationMs: number;
}

/** A warm transfer's settings (`session.transfer(target, { whisper })`). */
export interface TransferOptions {
  /** Spoken to the person who answers, never to the caller; set, the transfer is warm. */
  whisper?: string;
  /** How long the person may take to answer (5000 to 120000 ms; unset: 30000). */
  ringTimeoutMs?: number;
}

/** A transfer that did not happen; the call goes on (a warm one: the caller is off hold). */
export interface TransferFailure {
  readonly target: string;
  /** Why, e.g. "REFER answered 403 Forbidden". */
  readonly detail: string;
  /**
   * The same as one word: "no_answer", "busy", "declined", "refused" or "failed"; empty from a
   * service older than it.
   */
  readonly reason: string;
}

/** A finished caller turn the brain should answer. */
export interface Turn {
  /** The turn id; speech units for this turn carry it. */
  readonly id: string;
  /** What the caller said (finalized recognition), or typed. */
  readonly text: string;
  /**
   * The caller typed the turn on the page (RTVI `send-text`, the client's `sendText`) instead of
   * speaking it: `text` is exactly what was typed, not a recognition that may have misheard.
   */
  readonly typed: boolean;
  /** Fires when the service cancels the turn (the caller interrupted); stop work then. */
  readonly signal: AbortSignal;
  /**
   * Only with speculative turns on (`session.configure({ turns: { speculative: true } })`): the
   * caller paused and may go on, so the worker holds this reply's audio until it confirms the
   * turn. Then `signal` also fires when the caller goes on (their words come again at the head of
   * the next turn). Speech units still go out at once; the other verbs called from this turn wait
   * for the confirmation (and are dropped if it is cancelled).
   */
  readonly speculative: boolean;
  /**
   * Resolves `true` once the caller's turn is taken: at once for a turn that is not speculative,
   * when the worker confirms a speculative one (TurnConfirmed). Resolves `false` when a
   * speculative turn is cancelled (the caller went on) or the call ends first. Never rejects.
   * Await it before a side effect the SDK cannot hold for you (an order written to your
   * database, a message sent):
   * @example
   * yield `Placing order ${n}.`; // spoken only if the turn is confirmed
   * if (!(await turn.confirmed)) return; // the caller went on: record nothing
   * await orders.place(n);
   */
  readonly confirmed: Promise<boolean>;
}

/** The caller and the bot have both been quiet for `idleMs`: the brain has the floor. */
export interface IdleTurn {
  /** The turn id the brain answers on. */
  readonly id: string;
  /** How long both sides have been silent, in milliseconds. */
  readonly idleMs: number;
  /** Fires when the service cancels this turn. */
  readonly signal: AbortSignal;
}

/** What the caller heard of one speech unit. */
export interface HeardText {
  readonly unitId: string;
  readonly turnId: string;
  /** The part of the unit the caller actually heard. */
  readonly text: string;
  /** True when the caller interrupted the unit. */
  readonly cutOff: boolean;
}

/** Why and how a session ended, given to `onSessionEnd`. */
export interface SessionEndInfo {
  /** The service's reason, or `"disconnected"` when the socket closed without an End. */
  readonly reason: string;
  /** Everything the caller heard, in order. */
  readonly heard: readonly HeardText[];
}

/** A page message (RTVI JSON, verbatim), e.g. `{ type: "client-message", data: { t, d } }`. */
export interface RtviMessage {
  type?: string;
  id?: string;
  label?: string;
  data?: { t?: string; d?: unknown; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * What a turn handler returns. Each string an (async) iterable yields is one speech unit, sent
 * as soon as it is yielded; a plain string (or a promise of one) is a single unit; nothing
 * means the brain lets the turn pass. Empty strings are skipped.
 */
export type Reply =
  | AsyncIterable<string>
  | Iterable<string>
  | string
  | void
  | Promise<string | void>;

/** The callbacks of a brain. Only `onTurn` is required. */
export interface BrainHandlers {
  /**
   * The call starts. May call `session.configure(...)`; those Config frames are sent before the
   * greeting. Returns the greeting to speak (none: an empty greeting). Turns wait for it.
   */
  onSessionStart?(session: Session): string | void | Promise<string | void>;
  /**
   * The caller finished a turn, or (with speculative turns on) paused: see `turn.speculative` and
   * `turn.confirmed`. Returns the reply; see {@link Reply}.
   */
  onTurn(turn: Turn, session: Session): Reply;
  /** The caller heard (part of) a speech unit. */
  onHeard?(heard: HeardText, session: Session): void | Promise<void>;
  /**
   * The page sent a message (RTVI JSON, verbatim). The return value is ignored; to answer aloud
   * call `session.say(...)`. May dispatch, configure or end.
   */
  onRtvi?(message: RtviMessage, session: Session): unknown;
  /**
   * The caller pressed a key on a phone call (DTMF). The return value is ignored; may say,
   * dispatch, configure, end or transfer.
   */
  onDtmf?(dtmf: Dtmf, session: Session): unknown;
  /** A `session.transfer(...)` did not happen; the call goes on. */
  onTransferFailed?(failure: TransferFailure, session: Session): unknown;
  /**
   * Who answered an outbound call with machine detection on (`session.phone.machineDetection`
   * is set by then). The return value is ignored; on a machine with leave_message, wait for
   * `onBeep`: the greeting plays after it.
   */
  onMachineDetected?(detected: MachineDetected, session: Session): unknown;
  /** A leave_message machine's beep ended (or none is coming): the greeting now plays. */
  onBeep?(beep: Beep, session: Session): unknown;
  /** Silence for the configured idle timeout. Replies like `onTurn`; none lets the floor pass. */
  onUserIdle?(idle: IdleTurn, session: Session): Reply;
  /** The caller started or stopped speaking; needs `configure({ events: { speech: true } })`. */
  onUserSpeech?(speech: UserSpeech, session: Session): unknown;
  /** Interim recognition while the caller speaks; needs `events.interim_text`. */
  onInterimText?(interim: InterimText, session: Session): unknown;
  /** A turn's latency steps once it is over; needs `events.turn_metrics`. */
  onTurnMetrics?(metrics: TurnMetrics, session: Session): unknown;
  /** The call is over (End, or the socket closed). Runs exactly once per started session. */
  onSessionEnd?(session: Session, end: SessionEndInfo): void | Promise<void>;
}

/**
 * The socket the SDK needs: the browser/Deno `WebSocket`, or a Node `ws` socket. Messages are
 * binary; `binaryType` is set to `"arraybuffer"` when the socket has it.
 */
export interface WebSocketLike {
  binaryType?: string;
  readonly readyState?: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener?(
    type: "message" | "close" | "error",
    listener: (event: { data?: unknown }) => void,
  ): void;
}
