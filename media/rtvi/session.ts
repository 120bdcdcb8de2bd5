// The service's side of RTVI for one call: answers client-ready with bot-ready, answers
// requests, turns page messages into callbacks (a send-text into a typed turn), and keeps
// liveness from pings. It knows nothing
// of WebRTC: it reads and writes text frames.
//
// Whatever the page sends, receive() never throws and no handler's failure escapes it (it runs
// inside the SCTP stack's receive path); emit() never throws either. Limits (docs/limits.md):
// a message over MAX_RTVI_MESSAGE_BYTES is not parsed; an id over MAX_ID_CHARS is not echoed;
// page messages whose data the session log cannot store or the brain frame cannot carry (U+0000,
// unpaired surrogates, nesting over MAX_JSON_DEPTH) are refused; RTVI messages over the per-call
// rate are refused; an outbound message over the size limit is not sent. Every frame but pings
// is reported to onFrame with its verdict, so the log can keep only an excerpt of a refused one.
import { TokenBucket } from "../../common/token_bucket.ts";
import { logger } from "../../common/log.ts";
import { unstorable } from "../../common/http/json_body.ts";
import {
  ABOUT,
  classify,
  CLIENT_LATENCY_T,
  type ClientLatency,
  MAX_RTVI_MESSAGE_BYTES,
  overBytes,
  readClientLatency,
  readSendText,
  rtvi,
  RTVI_VERSION,
  type RtviMessage,
  SEND_TEXT,
} from "./protocol.ts";

const log = logger("rtvi");

/** Ids longer than this are not echoed back (Pipecat's are 8 characters). */
export const MAX_ID_CHARS = 128;
/** A type longer than this is no type the service knows; it is quoted only this far. */
const MAX_TYPE_CHARS = 64;

export interface RtviLimits {
  /** RTVI messages (not pings or signalling) per second, sustained. 0 turns the limit off. */
  messagesPerSecond: number;
  /** ... and in a burst. */
  burst: number;
}

/** Generous for a page (a client message per click or keystroke), tight for a script. */
export const DEFAULT_RTVI_LIMITS: RtviLimits = { messagesPerSecond: 20, burst: 60 };

export interface RtviHandlers {
  /** client-ready arrived (bot-ready is already sent): the call starts. */
  onClientReady?(about: unknown): void;
  /**
   * A typed turn (send-text, already checked: `text` is its trimmed content). Nothing answers
   * it, as Pipecat does not; a throw (the call cannot take it) becomes an error-response.
   */
  onSendText?(text: string): void;
  /**
   * A page message the brain receives verbatim: client-message, ui-event. For a
   * client-message the result is the `d` of the server-response (the page cannot tell a
   * request from a fire-and-forget message: both carry an id, and a response to the latter is
   * ignored); a throw becomes an error-response.
   */
  onPageMessage?(message: PageMessage): unknown | Promise<unknown>;
  /**
   * The page's own end-of-speech-to-first-audio figure (a client-message with the reserved
   * `t` "client-latency", already validated); never a page message for the brain. Returns
   * whether it was kept (the page hears it in the server-response's `d.recorded`).
   */
  onClientLatency?(latency: ClientLatency): boolean | void;
  /** disconnect-bot: end the call. */
  onDisconnectBot?(): void;
  /** trackStatus from the client (receiver index and whether it is enabled). */
  onTrackStatus?(receiverIndex: number, enabled: boolean): void;
  /**
   * Every frame but pings, once, before anything it causes: `refusal` says why it was refused or
   * ignored, undefined when it was taken. The session log keeps a refused frame's size and an
   * excerpt, not the frame (media/call/chat_log.ts): it may be megabytes the page should never
   * have sent, or a flood.
   */
  onFrame?(text: string, refusal?: string): void;
}

/** What the session refused or dropped so far (for the call's record and the fuzz bench). */
export interface RtviCounts {
  received: number;
  /** Not JSON, not an object, or not labelled rtvi-ai (ignored, as Pipecat does). */
  junk: number;
  /** Over MAX_RTVI_MESSAGE_BYTES: not parsed. */
  oversized: number;
  /** RTVI messages refused: bad id, or data that cannot be stored or forwarded. */
  refused: number;
  /** RTVI messages over the rate. */
  rateLimited: number;
  /** Outbound messages not sent: too large, not serializable, or the channel threw. */
  outboundDropped: number;
  /** A handler threw or its promise rejected. */
  handlerErrors: number;
}

/** A message the page sends for the brain: logged as a `page` event of its type, forwarded. */
export type PageMessage = RtviMessage & { type: "client-message" | "ui-event" };

const PAGE_TYPES = new Set(["client-message", "ui-event"]);
const isPageMessage = (m: RtviMessage): m is PageMessage => PAGE_TYPES.has(m.type);

export class RtviSession {
  /** performance.now() of the last frame of any kind from the page (pings included). */
  lastHeardAt = performance.now();
  ready = false;
  readonly counts: RtviCounts = {
    received: 0,
    junk: 0,
    oversized: 0,
    refused: 0,
    rateLimited: 0,
    outboundDropped: 0,
    handlerErrors: 0,
  };
  private handlers: RtviHandlers;
  private limits: RtviLimits;
  /** The per-call message bucket. */
  private bucket: TokenBucket;
  private warnedAt = -Infinity;

  constructor(
    private send: (text: string) => void,
    handlers: RtviHandlers = {},
    limits: RtviLimits = DEFAULT_RTVI_LIMITS,
  ) {
    this.handlers = handlers;
    this.limits = limits;
    this.bucket = new TokenBucket(limits.messagesPerSecond, limits.burst);
  }

  setHandlers(handlers: RtviHandlers): void {
    this.handlers = handlers;
  }

  /**
   * Sends an RTVI event or message to the page; false when it was not sent (too large, not
   * serializable, or the channel refused it). A response (with an id) too large to send is
   * replaced by an error-response, so the page's request does not wait for nothing.
   */
  emit(type: string, data?: unknown, id?: string): boolean {
    let text: string;
    try {
      text = rtvi(type, data, id);
    } catch (err) {
      return this.dropped(type, `not serializable: ${(err as Error)?.message}`, id);
    }
    if (overBytes(text)) {
      return this.dropped(type, `larger than ${MAX_RTVI_MESSAGE_BYTES} bytes`, id);
    }
    try {
      this.send(text);
      return true;
    } catch (err) {
      this.counts.outboundDropped++;
      log.warn("rtvi message not sent", { type, cause: (err as Error)?.message });
      return false;
    }
  }

  private dropped(type: string, why: string, id?: string): false {
    this.counts.outboundDropped++;
    log.warn("rtvi message not sent", { type, why });
    if (id !== undefined && type !== "error-response") {
      this.emit("error-response", { error: `The ${type} was not sent: ${why}.` }, id);
    }
    return false;
  }

  /** Feeds one text frame from the chat channel. Never throws. */
  receive(text: string): void {
    this.lastHeardAt = performance.now();
    this.counts.received++;
    try {
      this.handle(text);
    } catch (err) {
      this.counts.handlerErrors++;
      log.error("rtvi message handling failed", { cause: (err as Error)?.message });
    }
  }

  /** Reports a frame to onFrame; its failure is counted and does not stop the frame's handling. */
  private frame(text: string, refusal?: string): void {
    try {
      this.handlers.onFrame?.(text, refusal);
    } catch (err) {
      this.failed("frame")(err);
    }
  }

  private handle(text: string): void {
    const inbound = classify(text);
    switch (inbound.kind) {
      case "ping":
        return;
      case "junk":
        this.counts.junk++;
        this.frame(text, inbound.reason);
        return;
      case "oversized":
        this.counts.oversized++;
        this.frame(text, `larger than ${MAX_RTVI_MESSAGE_BYTES} bytes`);
        // Not parsed, so there is no id to answer: a non-fatal error tells the page why.
        if (this.take()) {
          this.emit("error", {
            error: `Message larger than ${MAX_RTVI_MESSAGE_BYTES} bytes ignored.`,
            fatal: false,
          });
        }
        return;
      case "signalling":
        this.frame(text);
        if (inbound.message.type === "trackStatus") {
          this.handlers.onTrackStatus?.(
            Number(inbound.message.receiver_index),
            Boolean(inbound.message.enabled),
          );
        }
        return;
      case "rtvi":
        this.dispatch(inbound.message, text);
    }
  }

  /** One token of the per-call message bucket; false when the page is over the rate. */
  private take(): boolean {
    return this.bucket.take();
  }

  /** A handler's result as a promise: a throw becomes a rejection, never an exception here. */
  private run(fn: () => unknown): Promise<unknown> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Counts and logs a handler's failure that nobody else answers. */
  private failed(what: string): (err: unknown) => void {
    return (err) => {
      this.counts.handlerErrors++;
      log.error(`rtvi ${what} handler failed`, { cause: (err as Error)?.message ?? String(err) });
    };
  }

  /** Ours, not the brain's: checked, handed to onClientLatency, answered if it has an id. */
  private clientLatency(m: RtviMessage, text: string): void {
    const value = readClientLatency((m.data as { d?: unknown }).d);
    this.frame(text, "problem" in value ? value.problem : undefined);
    if ("problem" in value) {
      this.counts.refused++;
      if (m.id !== undefined) {
        this.emit("error-response", { error: `Refused: ${value.problem}.` }, m.id);
      }
      return;
    }
    this.run(() => this.handlers.onClientLatency?.(value)).then(
      (kept) => {
        if (m.id === undefined) return;
        this.emit("server-response", { t: CLIENT_LATENCY_T, d: { recorded: kept === true } }, m.id);
      },
      (err) => {
        this.failed("client-latency")(err);
        if (m.id !== undefined) this.emit("error-response", { error: "Not recorded." }, m.id);
      },
    );
  }

  /** A typed turn: checked here, handed to onSendText; only a refusal is answered. */
  private sendText(m: RtviMessage, text: string): void {
    // Logged as it came (jsonb) and sent on to the brain: what neither can carry is refused too.
    const value = readSendText(m.data);
    const problem = "problem" in value
      ? value.problem
      : unstorable({ type: m.type, data: m.data })?.message;
    this.frame(text, problem);
    const refuse = (why: string) => {
      if (m.id !== undefined) this.emit("error-response", { error: `Refused: ${why}` }, m.id);
    };
    if (problem !== undefined || "problem" in value) {
      this.counts.refused++;
      return refuse(`${problem}.`);
    }
    // A throw is the call refusing the turn (not started yet, or ending): answered, not logged.
    this.run(() => this.handlers.onSendText?.(value.text)).catch((err) => {
      this.counts.refused++;
      refuse((err as Error)?.message ?? String(err));
    });
  }

  private dispatch(m: RtviMessage, text: string): void {
    if (!this.take()) {
      // Over the rate: dropped, requests included (answering each would let a flood make the
      // worker send as much as it receives). The page hears of it at most once a second.
      this.counts.rateLimited++;
      this.frame(text, `over ${this.limits.messagesPerSecond} messages a second`);
      const now = performance.now();
      if (now - this.warnedAt >= 1000) {
        this.warnedAt = now;
        this.emit("error", {
          error: `Too many messages: over ${this.limits.messagesPerSecond} a second are dropped.`,
          fatal: false,
        });
      }
      return;
    }
    if (m.id !== undefined && m.id.length > MAX_ID_CHARS) {
      this.counts.refused++;
      this.frame(text, `id longer than ${MAX_ID_CHARS} characters`);
      this.emit("error", {
        error: `Message id longer than ${MAX_ID_CHARS} characters.`,
        fatal: false,
      });
      return;
    }
    if (m.type === "client-ready") {
      this.frame(text);
      // The id of bot-ready is the client-ready id, as Pipecat does.
      this.emit("bot-ready", { version: RTVI_VERSION, about: ABOUT }, m.id);
      if (!this.ready) {
        this.ready = true;
        const about = (m.data as { about?: unknown } | null | undefined)?.about;
        this.run(() => this.handlers.onClientReady?.(about)).catch(this.failed("client-ready"));
      }
      return;
    }
    if (m.type === "disconnect-bot") {
      this.frame(text);
      this.run(() => this.handlers.onDisconnectBot?.()).catch(this.failed("disconnect-bot"));
      return;
    }
    if (m.type === "client-message" && (m.data as { t?: unknown } | null)?.t === CLIENT_LATENCY_T) {
      return this.clientLatency(m, text);
    }
    if (m.type === SEND_TEXT) return this.sendText(m, text);
    if (isPageMessage(m)) {
      // What the page sends is logged (jsonb) and forwarded to the brain (JSON in a frame): data
      // neither can carry is refused here rather than failing there.
      const problem = unstorable({ type: m.type, data: m.data });
      this.frame(text, problem?.message);
      if (problem) {
        this.counts.refused++;
        if (m.id !== undefined) {
          this.emit("error-response", { error: `Refused: ${problem.message}` }, m.id);
        }
        return;
      }
      const handled = this.run(() => this.handlers.onPageMessage?.(m));
      if (m.type === "client-message" && m.id !== undefined) {
        const t = (m.data as { t?: unknown } | null | undefined)?.t;
        handled.then(
          (d) =>
            this.emit("server-response", { t: typeof t === "string" ? t : "", d: d ?? null }, m.id),
          (err) =>
            this.emit("error-response", { error: (err as Error)?.message ?? String(err) }, m.id),
        );
      } else {
        handled.catch(this.failed(m.type));
      }
      return;
    }
    this.frame(text, "unsupported type");
    if (m.id !== undefined) {
      const type = m.type.length > MAX_TYPE_CHARS ? `${m.type.slice(0, MAX_TYPE_CHARS)}…` : m.type;
      this.emit("error-response", { error: `Unsupported type ${type}` }, m.id);
    }
  }
}
