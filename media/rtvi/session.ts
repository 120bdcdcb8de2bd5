// The service's side of RTVI for one call: answers client-ready with bot-ready, answers
// requests, turns page messages into callbacks, and keeps liveness from pings. It knows nothing
// of WebRTC: it reads and writes text frames.
import { ABOUT, classify, rtvi, RTVI_VERSION, type RtviMessage } from "./protocol.ts";

export interface RtviHandlers {
  /** client-ready arrived (bot-ready is already sent): the call starts. */
  onClientReady?(about: unknown): void;
  /**
   * A page message the brain receives verbatim: client-message, send-text, ui-event. For a
   * client-message the result is the `d` of the server-response (the page cannot tell a
   * request from a fire-and-forget message: both carry an id, and a response to the latter is
   * ignored); a throw becomes an error-response.
   */
  onPageMessage?(message: RtviMessage): unknown | Promise<unknown>;
  /** disconnect-bot: end the call. */
  onDisconnectBot?(): void;
  /** trackStatus from the client (receiver index and whether it is enabled). */
  onTrackStatus?(receiverIndex: number, enabled: boolean): void;
}

const PAGE_TYPES = new Set(["client-message", "send-text", "ui-event"]);

export class RtviSession {
  /** performance.now() of the last frame of any kind from the page (pings included). */
  lastHeardAt = performance.now();
  ready = false;
  private handlers: RtviHandlers;

  constructor(private send: (text: string) => void, handlers: RtviHandlers = {}) {
    this.handlers = handlers;
  }

  setHandlers(handlers: RtviHandlers): void {
    this.handlers = handlers;
  }

  /** Sends an RTVI event or message to the page. */
  emit(type: string, data?: unknown, id?: string): void {
    this.send(rtvi(type, data, id));
  }

  /** Feeds one text frame from the chat channel. */
  receive(text: string): void {
    this.lastHeardAt = performance.now();
    const inbound = classify(text);
    switch (inbound.kind) {
      case "ping":
      case "junk":
        return;
      case "signalling":
        if (inbound.message.type === "trackStatus") {
          this.handlers.onTrackStatus?.(
            Number(inbound.message.receiver_index),
            Boolean(inbound.message.enabled),
          );
        }
        return;
      case "rtvi":
        this.dispatch(inbound.message);
    }
  }

  private dispatch(m: RtviMessage): void {
    if (m.type === "client-ready") {
      // The id of bot-ready is the client-ready id, as Pipecat does.
      this.emit("bot-ready", { version: RTVI_VERSION, about: ABOUT }, m.id);
      if (!this.ready) {
        this.ready = true;
        this.handlers.onClientReady?.((m.data as { about?: unknown } | undefined)?.about);
      }
      return;
    }
    if (m.type === "disconnect-bot") {
      this.handlers.onDisconnectBot?.();
      return;
    }
    if (PAGE_TYPES.has(m.type)) {
      const handled = (async () => await this.handlers.onPageMessage?.(m))();
      if (m.type === "client-message" && m.id !== undefined) {
        const t = (m.data as { t?: unknown } | undefined)?.t;
        handled.then(
          (d) =>
            this.emit("server-response", { t: typeof t === "string" ? t : "", d: d ?? null }, m.id),
          (err) =>
            this.emit("error-response", { error: (err as Error)?.message ?? String(err) }, m.id),
        );
      } else {
        handled.catch(() => {});
      }
      return;
    }
    if (m.id !== undefined) {
      this.emit("error-response", { error: `Unsupported type ${m.type}` }, m.id);
    }
  }
}
