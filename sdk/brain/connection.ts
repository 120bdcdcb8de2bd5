// One brain WebSocket (one call): decodes ServiceFrames, runs the handlers, encodes BrainFrames.
// Handlers never block the socket: each turn runs on its own, so turns may overlap and a Cancel
// reaches a turn while it is still working.
import { ConfigType } from "../../proto/mod.ts";
import { type BrainFrameKind, decodeServiceFrame, encodeBrainFrame } from "../../proto/frames.ts";
import { configJson } from "./config.ts";
import { type Body, CallSession } from "./call_session.ts";
import { inTurn, SpeculativeTurn } from "./speculative.ts";
import type {
  BrainHandlers,
  HeardText,
  JsonObject,
  PhoneInfo,
  ReplayInfo,
  Reply,
  RtviMessage,
  TraceContext,
  WebSocketLike,
} from "./types.ts";

const OPEN = 1;

function logError(what: string, fields: Record<string, string>, err?: unknown) {
  const where = Object.entries(fields).map(([k, v]) => `${k}=${v}`).join(" ");
  // The stack or message only: never the frame contents, which may carry the caller's words.
  const detail = err instanceof Error
    ? (err.stack ?? err.message)
    : err === undefined
    ? ""
    : String(err);
  console.error(`[brain] ${what} ${where}${detail ? "\n" + detail : ""}`);
}

async function bytesOf(data: unknown): Promise<Uint8Array | null> {
  if (data instanceof Uint8Array) return data; // includes Node's Buffer
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) {
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  }
  if (typeof Blob !== "undefined" && data instanceof Blob) {
    return new Uint8Array(await data.arrayBuffer());
  }
  return null;
}

function heardOf(h: Record<string, unknown>): HeardText {
  return {
    unitId: String(h.unit_id ?? ""),
    turnId: String(h.turn_id ?? ""),
    text: String(h.text ?? ""),
    cutOff: Boolean(h.cut_off),
  };
}

function parseInit(json: string): JsonObject {
  if (!json) return {};
  const value = JSON.parse(json);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};
}

function isIterable(reply: unknown): reply is AsyncIterable<string> | Iterable<string> {
  return typeof reply === "object" && reply !== null &&
    (Symbol.asyncIterator in reply || Symbol.iterator in reply);
}

/** SessionStart's trace context, as a carrier `propagation.extract` reads (empty values left out). */
function traceContextOf(body: Body): TraceContext {
  const out: TraceContext = {};
  if (body.traceparent) out.traceparent = String(body.traceparent);
  if (body.tracestate) out.tracestate = String(body.tracestate);
  return out;
}

function phoneOf(p: unknown): PhoneInfo | null {
  if (!p || typeof p !== "object") return null;
  const b = p as Body;
  return {
    from: String(b.from ?? ""),
    to: String(b.to ?? ""),
    carrier: String(b.carrier ?? ""),
    callId: String(b.call_id ?? ""),
    direction: b.direction === "outbound" ? "outbound" : "inbound",
    machineDetection: b.machine_detection === "human" || b.machine_detection === "machine"
      ? b.machine_detection
      : null,
  };
}

function replayOf(r: unknown): ReplayInfo | null {
  if (!r || typeof r !== "object") return null;
  return { originalSessionId: String((r as Body).original_session_id ?? "") };
}

/** The protocol core for one socket. Created by `Brain.accept`. */
export class BrainConnection {
  /** Resolves when the socket is closed and `onSessionEnd` (if due) has run. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private seq = 0;
  private session: CallSession | null = null;
  private ready: Promise<void> = Promise.resolve();
  private readonly turns = new Map<string, AbortController>();
  /** Speculative turns not yet confirmed or cancelled (their handler may be over). */
  private readonly speculative = new Map<string, SpeculativeTurn>();
  private finalHeard: HeardText[] | null = null;
  private finished = false;
  private inbox: Promise<void> = Promise.resolve();

  private readonly socket: WebSocketLike;
  private readonly handlers: BrainHandlers;
  private readonly sessionId: string;

  constructor(socket: WebSocketLike, handlers: BrainHandlers, sessionId = "") {
    this.socket = socket;
    this.handlers = handlers;
    this.sessionId = sessionId;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    if ("binaryType" in socket) socket.binaryType = "arraybuffer";
    const onMessage = (event: { data?: unknown }) => {
      // A chain keeps frames in order even when one needs an async conversion (Blob).
      this.inbox = this.inbox.then(() => this.receive(event.data))
        .catch((err) => this.log("frame handling failed", err));
    };
    const onClose = () => {
      this.inbox = this.inbox.then(() => this.finish("disconnected", false));
    };
    if (socket.addEventListener) {
      socket.addEventListener("message", onMessage);
      socket.addEventListener("close", onClose);
      socket.addEventListener("error", () => {}); // a close event follows
    } else {
      const s = socket as unknown as Record<string, unknown>;
      s.onmessage = onMessage;
      s.onclose = onClose;
    }
  }

  /** Closes the socket; the session ends as "disconnected" if no End came first. */
  close(): void {
    try {
      this.socket.close(1000, "brain closing");
    } catch { /* already closed */ }
  }

  private send(kind: BrainFrameKind, body: Body): void {
    if (this.finished) return;
    if (this.socket.readyState !== undefined && this.socket.readyState !== OPEN) return;
    try {
      this.socket.send(encodeBrainFrame(++this.seq, kind, body));
    } catch (err) {
      this.log("send failed", err); // the socket is closing; its close event ends the session
    }
  }

  private log(what: string, err?: unknown, turnId?: string) {
    const fields: Record<string, string> = { session: this.session?.id ?? this.sessionId };
    if (turnId) fields.turn = turnId;
    logError(what, fields, err);
  }

  private async receive(data: unknown): Promise<void> {
    if (this.finished) return;
    const bytes = await bytesOf(data);
    if (!bytes) return this.log("ignored a non-binary message");
    let kind: string, body: Body;
    try {
      ({ kind, body } = decodeServiceFrame(bytes));
    } catch (err) {
      return this.log("could not decode a ServiceFrame", err);
    }
    if (kind === "session_start") return this.start(body);
    const session = this.session;
    if (!session) return this.log(`${kind} before session_start, ignored`);
    switch (kind) {
      case "user_turn": {
        const id = String(body.turn_id ?? "");
        const text = String(body.text ?? "");
        const typed = body.typed === true;
        const speculative = body.speculative === true;
        const controller = new AbortController();
        const held = speculative ? this.speculate(id, controller) : null;
        const confirmed = held ? held.confirmed : Promise.resolve(true);
        const onTurn = (signal: AbortSignal) =>
          this.handlers.onTurn({ id, text, typed, signal, speculative, confirmed }, session);
        // The handler and all it starts run as part of the speculative turn: their sends wait.
        inTurn(held, () => this.runTurn(id, onTurn, controller));
        return;
      }
      case "turn_confirmed": {
        const id = String(body.turn_id ?? "");
        this.speculative.get(id)?.confirm();
        this.speculative.delete(id);
        return;
      }
      case "user_idle": {
        const id = String(body.turn_id ?? "");
        const idleMs = Number(body.idle_ms ?? 0);
        const onIdle = this.handlers.onUserIdle;
        this.runTurn(id, (signal) => onIdle?.call(this.handlers, { id, idleMs, signal }, session));
        return;
      }
      case "cancel": {
        const id = String(body.turn_id ?? "");
        this.speculative.get(id)?.cancel(); // before the abort: the handler sees false, not true
        this.speculative.delete(id);
        this.turns.get(id)?.abort();
        return;
      }
      case "heard": {
        const heard = heardOf(body);
        session.heard.push(heard);
        session.says.heard(heard);
        this.call("onHeard", () => this.handlers.onHeard?.(heard, session));
        return;
      }
      case "client_message": {
        let message: RtviMessage;
        try {
          message = JSON.parse(String(body.json ?? ""));
        } catch (err) {
          return this.log("client_message is not JSON, ignored", err);
        }
        this.call("onRtvi", () => this.handlers.onRtvi?.(message, session));
        return;
      }
      case "dtmf": {
        const dtmf = { digit: String(body.digit ?? ""), durationMs: Number(body.duration_ms ?? 0) };
        if (session.keypad.press(dtmf.digit)) return; // a collection's key skips onDtmf
        this.call("onDtmf", () => this.handlers.onDtmf?.(dtmf, session));
        return;
      }
      case "transfer_failed": {
        const failure = {
          target: String(body.target ?? ""),
          detail: String(body.detail ?? ""),
          reason: String(body.reason ?? ""),
        };
        this.call("onTransferFailed", () => this.handlers.onTransferFailed?.(failure, session));
        return;
      }
      case "machine_detected": {
        const outcome: "human" | "machine" = body.outcome === "machine" ? "machine" : "human";
        const detected = { outcome, atMs: Number(body.at_ms ?? 0), why: String(body.why ?? "") };
        if (session.phone) session.phone = { ...session.phone, machineDetection: outcome };
        this.call("onMachineDetected", () => this.handlers.onMachineDetected?.(detected, session));
        return;
      }
      case "beep": {
        const beep = {
          atMs: Number(body.at_ms ?? 0),
          heard: body.heard === true,
          hz: Number(body.hz ?? 0),
          why: String(body.why ?? ""),
        };
        this.call("onBeep", () => this.handlers.onBeep?.(beep, session));
        return;
      }
      case "say_started":
        session.says.started(String(body.say_id ?? ""), String(body.turn_id ?? ""));
        return;
      case "say_refused":
        session.says.refused(String(body.say_id ?? ""), String(body.detail ?? ""));
        return;
      case "user_speech": {
        const speech = { speaking: body.speaking === true, overBot: body.over_bot === true };
        this.call("onUserSpeech", () => this.handlers.onUserSpeech?.(speech, session));
        return;
      }
      case "interim_text": {
        const interim = { text: String(body.text ?? "") };
        this.call("onInterimText", () => this.handlers.onInterimText?.(interim, session));
        return;
      }
      case "turn_metrics": {
        const metrics = {
          turnId: String(body.turn_id ?? ""),
          trigger: String(body.trigger ?? ""),
          latencyMs: { ...(body.latency_ms as Record<string, number> ?? {}) },
          interrupted: body.interrupted === true,
        };
        this.call("onTurnMetrics", () => this.handlers.onTurnMetrics?.(metrics, session));
        return;
      }
      case "finalize": {
        const list = ((body.heard ?? []) as Record<string, unknown>[]).map(heardOf);
        this.finalHeard = list;
        session.heard = list;
        return;
      }
      case "end":
        return this.finish(String(body.reason ?? ""), true);
    }
  }

  private start(body: Body): void {
    if (this.session) return this.log("second session_start, ignored");
    const id = String(body.session_id ?? "");
    if (this.sessionId && id !== this.sessionId) {
      this.log(`session_start id ${id} differs from the URL's session_id`);
    }
    let init: JsonObject = {};
    try {
      init = parseInit(String(body.init_json ?? ""));
    } catch (err) {
      this.log("init_json is not JSON, using {}", err);
    }
    const config = body.config ? configJson(ConfigType.fromObject(body.config as Body)) : {};
    const session = new CallSession(
      id,
      String(body.agent_id ?? ""),
      init,
      config,
      phoneOf(body.phone),
      replayOf(body.replay),
      (kind, b) => this.send(kind, b),
    );
    session.traceContext = traceContextOf(body);
    this.session = session;
    const onStart = this.handlers.onSessionStart;
    this.ready = (async () => {
      let greeting: unknown = "";
      try {
        greeting = (await onStart?.call(this.handlers, session)) ?? "";
      } catch (err) {
        this.log("onSessionStart failed; greeting is empty", err);
      }
      if (typeof greeting !== "string") {
        this.log(`onSessionStart returned a ${typeof greeting}, not a string; greeting is empty`);
        greeting = "";
      }
      // Sent after every Config that onSessionStart caused: voice and language apply to it.
      this.send("greeting", { text: greeting });
    })();
  }

  private speculate(turnId: string, controller: AbortController): SpeculativeTurn {
    const log = (what: string, err?: unknown) => this.log(what, err, turnId);
    const turn = new SpeculativeTurn(turnId, log, () => controller.abort());
    this.speculative.set(turnId, turn);
    return turn;
  }

  private async runTurn(
    turnId: string,
    handler: (signal: AbortSignal) => Reply,
    controller = new AbortController(),
  ): Promise<void> {
    const signal = controller.signal;
    this.turns.set(turnId, controller);
    const live = () => !signal.aborted && !this.finished;
    let n = 0;
    const speak = (text: unknown) => {
      if (typeof text !== "string") throw new Error(`a turn handler yielded a ${typeof text}`);
      if (text.trim() === "" || !live()) return;
      n += 1;
      this.send("speech_unit", { turn_id: turnId, unit_id: `${turnId}.${n}`, text, last: false });
    };
    try {
      await this.ready; // turns start once onSessionStart has run
      if (!live()) return;
      const reply = handler(signal);
      if (isIterable(reply)) {
        for await (const text of reply) {
          if (!live()) break; // stops the generator; what it yields later is dropped
          speak(text);
        }
      } else {
        speak((await reply) ?? "");
      }
    } catch (err) {
      if (live()) this.log("turn handler failed", err, turnId);
    } finally {
      if (this.turns.get(turnId) === controller) this.turns.delete(turnId);
      if (live()) {
        this.send("speech_unit", {
          turn_id: turnId,
          unit_id: `${turnId}.end`,
          text: "",
          last: true,
        });
      }
    }
  }

  private call(name: string, fn: () => unknown): void {
    try {
      Promise.resolve(fn()).catch((err) => this.log(`${name} failed`, err));
    } catch (err) {
      this.log(`${name} failed`, err);
    }
  }

  private async finish(reason: string, closeSocket: boolean): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    for (const turn of this.speculative.values()) turn.cancel("ended with the call");
    this.speculative.clear();
    for (const controller of this.turns.values()) controller.abort();
    this.turns.clear();
    const session = this.session;
    if (session) {
      session.ended = true;
      const heard = this.finalHeard ?? session.heard;
      session.says.end(heard);
      session.keypad.end();
      try {
        await this.handlers.onSessionEnd?.(session, { reason, heard });
      } catch (err) {
        this.log("onSessionEnd failed", err);
      }
    }
    if (closeSocket) this.close();
    this.resolveDone();
  }
}
