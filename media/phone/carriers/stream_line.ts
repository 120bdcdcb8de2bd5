// A phone line over a telephony provider's media WebSocket (Twilio Media Streams, Plivo Audio
// Streams, Exotel's Voicebot applet): the provider's JSON messages in, read by its dialect; the
// caller's base64 audio made into 16 kHz frames, one per 20 ms of the caller's time; the bot's
// 48 kHz frames pulled on the worker's shared frame clock and sent back as base64 audio.
//
// Bot audio is sent only while the bot speaks, not as continuous silence: each provider plays
// what it has received in order and plays silence itself when it has nothing, so 50 messages a
// second of silence would buy nothing, and an empty queue is what lets `clear()` be exact.
import { Emitter } from "../../rtc/emitter.ts";
import type { FrameSource } from "../../audio/frame_source.ts";
import { sharedFrameClock } from "../../audio/frame_clock.ts";
import { type LatenessHistogram, Pacer } from "../../audio/pacer.ts";
import { logger } from "../../../common/log.ts";
import type { Carrier, LineEndReason, TransferResult } from "../line.ts";
import { type CallLine, type PhoneAbout, sentTo } from "../../call/line.ts";
import type { MachineDetection } from "../../../common/dial.ts";
import { warmRefusal, type WarmRequest } from "../../call/transfer.ts";
import { HeldKeys } from "../held_keys.ts";
import type { LineFormat, StreamDialect, StreamEvent } from "./dialect.ts";
import { CallerTimeline } from "./caller_timeline.ts";
import { BotVoiceOut } from "./bot_voice_out.ts";
import { CallerEdge } from "../edge_audio.ts";
import { g711Decode } from "../g711.ts";

const log = logger("phone-stream");

export type StreamStart = Extract<StreamEvent, { kind: "start" }>;

/** What the provider's REST API can do to a call beyond its stream (twilio/, plivo/ rest.ts). */
export interface CallControl {
  /** Ends the phone call itself; resolves with what the provider answered. */
  hangUp(callId: string): Promise<string>;
  transfer(callId: string, target: string): Promise<TransferResult>;
}

export interface StreamLineOptions {
  control?: CallControl;
  /** No message from the provider for this long ends the call `media_timeout` (default 10 s). */
  mediaTimeoutMs?: number;
  /** A start message must come this soon after the socket opens (default 10 s). */
  startTimeoutMs?: number;
}

/** Close codes the line uses (RFC 6455 §7.4.1; 4000-4999 are the application's own). */
export const CLOSE_NORMAL = 1000;
export const CLOSE_POLICY = 1008;
export const CLOSE_TOO_BIG = 1009;

/**
 * The largest message a stream may send: a provider's media message is a few hundred bytes of
 * JSON (Twilio's 20 ms of μ-law, base64: ~250 B; Plivo's and Exotel's chunks: a few KB), its
 * start message under 2 KB. 64 KiB leaves room for any of them (issue 32: 16 MiB were taken).
 */
export const MAX_STREAM_MESSAGE_BYTES = 64 * 1024;

/** A message's size: UTF-16 units of a text message (at most its UTF-8 bytes), bytes of binary. */
function messageSize(data: unknown): number {
  if (typeof data === "string") return data.length;
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (data instanceof Blob) return data.size;
  return 0;
}

const DTMF_DIGIT = /^[0-9*#A-D]$/;
/** How long a transferred call's stream is left for the provider to end before it is closed. */
const TRANSFER_HANDOVER_MS = 10_000;

export class StreamPhoneLine implements CallLine {
  readonly carrier: Carrier;
  readonly onCallerFrame = new Emitter<[Int16Array]>();
  /** Keys pressed before the call listens (the token is checked, the call made) are held. */
  readonly onDtmf = new HeldKeys();
  readonly onEnded = new Emitter<[LineEndReason]>();
  /** Resolves with the provider's start message; rejects if the stream ends or errs before it. */
  readonly started: Promise<StreamStart>;

  #start?: StreamStart;
  #from = "";
  #to = "";
  #direction: "inbound" | "outbound" = "inbound";
  #machineDetection: MachineDetection = "off";
  #accepted = false;
  #ended = false;
  #transferred = false;
  /** The provider's REST transfer while it is under way (its stop may come before its answer). */
  #transferring?: Promise<TransferResult>;
  #lastMessageAt = performance.now();
  readonly #pacer: Pacer;
  /** The caller's and the bot's audio paths, made for the stream's format (`#useFormat`). */
  #format!: LineFormat;
  #timeline!: CallerTimeline;
  /** Up-sampling of 8 kHz caller audio; none for a 16 kHz stream, already at the pipeline's rate. */
  #edge?: CallerEdge;
  #voice!: BotVoiceOut;
  #startTimer?: ReturnType<typeof setTimeout>;
  #stopped = false;
  readonly #counts = {
    messages_in: 0,
    media_in: 0,
    media_before_accept: 0,
    bad_messages: 0,
    dtmf: 0,
    media_out: 0,
    bot_frames: 0,
    clears: 0,
    marks_sent: 0,
    marks_played: 0,
  };

  constructor(
    private readonly socket: WebSocket,
    readonly dialect: StreamDialect,
    private readonly options: StreamLineOptions = {},
  ) {
    this.carrier = dialect.carrier;
    this.#useFormat({ audio: dialect.audio, rate: 8000 });
    this.#pacer = new Pacer(() => this.#tick(), { clock: sharedFrameClock() });
    let resolveStart!: (s: StreamStart) => void, rejectStart!: (e: Error) => void;
    this.started = new Promise((res, rej) => {
      resolveStart = res;
      rejectStart = rej;
    });
    // A caller of `started` that stops listening must not leave an unhandled rejection.
    this.started.catch(() => {});
    this.#startTimer = setTimeout(() => {
      rejectStart(new Error("no start message"));
      this.#close(CLOSE_POLICY, "no start message");
    }, options.startTimeoutMs ?? 10_000);
    socket.addEventListener("message", (e) => {
      if (this.#ended) return;
      if (messageSize(e.data) > MAX_STREAM_MESSAGE_BYTES) {
        // Deno has read it whole already (no size option); it is not parsed, and the stream ends.
        log.warn("stream message too large", {
          carrier: this.carrier,
          bytes: messageSize(e.data),
        });
        this.#ended = true;
        this.#stop();
        this.#close(CLOSE_TOO_BIG, "message too large");
        return;
      }
      this.#lastMessageAt = performance.now();
      this.#counts.messages_in++;
      let event: StreamEvent;
      try {
        if (typeof e.data !== "string") throw new Error("a binary message");
        event = dialect.read(JSON.parse(e.data));
      } catch (err) {
        // One message the line cannot read costs that message, not the call.
        this.#counts.bad_messages++;
        log.warn("unreadable message", { carrier: this.carrier, cause: (err as Error).message });
        return;
      }
      if (event.kind === "start" && !this.#start) {
        this.#start = event;
        const format = dialect.formatOf?.(event);
        if (format && (format.audio !== this.#format.audio || format.rate !== this.#format.rate)) {
          const source = this.#voice.source;
          this.#voice.close();
          this.#edge?.close();
          this.#useFormat(format);
          this.#voice.source = source;
        }
        clearTimeout(this.#startTimer);
        resolveStart(event);
        return;
      }
      this.#handle(event);
    });
    socket.addEventListener("close", () => {
      clearTimeout(this.#startTimer);
      rejectStart(new Error("the stream closed before its start message"));
      this.#farEnded();
    });
  }

  /** The audio paths for `format`: caller frames at 16 kHz either way, the bot's at the line's rate. */
  #useFormat(format: LineFormat): void {
    this.#format = format;
    if (format.rate === 16000) {
      this.#edge = undefined;
      this.#timeline = new CallerTimeline((frame) => this.onCallerFrame.emit(frame), 16000);
    } else {
      const edge = new CallerEdge("PCMU", (pcm16k) => this.onCallerFrame.emit(pcm16k.slice()));
      this.#edge = edge;
      this.#timeline = new CallerTimeline((frame) => edge.pushPcm(frame));
    }
    this.#voice = new BotVoiceOut(this.dialect, (payload, frames) => {
      this.#counts.media_out++;
      this.#counts.bot_frames += frames;
      this.#send(this.dialect.media(this.#start!.streamId, payload, format));
    }, (name) => {
      this.#counts.marks_sent++;
      this.#send(this.dialect.mark(this.#start!.streamId, name));
    }, format);
  }

  /** The stream's audio format (known once its start message has come). */
  get format(): LineFormat {
    return this.#format;
  }

  /** 16 kHz audio is wideband (recognition's prior per channel kind); 8 kHz is the phone band. */
  get channel(): "wideband" | "narrowband" {
    return this.#format.rate === 16000 ? "wideband" : "narrowband";
  }

  get from(): string {
    return this.#from;
  }
  /** What the worker's detector does on a placed call (off where the carrier's own decided). */
  get machineDetection(): MachineDetection {
    return this.#machineDetection;
  }
  get to(): string {
    return this.#to;
  }
  get callId(): string {
    return this.#start?.callId ?? "";
  }
  get streamId(): string {
    return this.#start?.streamId ?? "";
  }

  /**
   * The call may begin (its session token was good): caller audio flows from now on, and the bot's
   * is paced. `numbers` are the caller's and dialled numbers the session was opened with (from
   * the provider's signed webhook); the start message's own are used where those are missing.
   */
  accept(
    numbers: {
      from?: string;
      to?: string;
      /** A call the service placed through the carrier (calls.dial), and its detection mode. */
      outbound?: { machineDetection: MachineDetection };
    } = {},
  ): void {
    if (!this.#start) throw new Error("accept() before the start message");
    if (this.#ended || this.#accepted) return;
    this.#from = numbers.from || this.#start.from || "";
    this.#to = numbers.to || this.#start.to || "";
    if (numbers.outbound) {
      this.#direction = "outbound";
      this.#machineDetection = numbers.outbound.machineDetection;
    }
    this.#accepted = true;
    this.#lastMessageAt = performance.now();
    this.#pacer.start();
  }

  /** The call may not begin: the socket is closed with `reason` (no call, nothing written). */
  refuse(reason: string): void {
    this.#ended = true;
    this.#stop();
    this.#close(CLOSE_POLICY, reason.slice(0, 120));
  }

  get phone(): PhoneAbout {
    return {
      carrier: this.carrier,
      from: this.from,
      to: this.to,
      call_id: this.callId,
      direction: this.#direction,
    };
  }

  play(source: FrameSource, sent?: (pcm: Int16Array | undefined) => void): void {
    this.#voice.source = sentTo(source, sent);
  }

  clear(): void {
    if (!this.#start || this.#ended) return;
    this.#voice.drop();
    this.#counts.clears++;
    this.#send(this.dialect.clear(this.#start.streamId));
  }

  /**
   * Ends the call from the worker's side. Closing a stream ends only the stream: Twilio then goes
   * on with the TwiML after `<Connect>`, Plivo (keepCallAlive) with the XML after `<Stream>`,
   * Exotel with the applet after Voicebot; with nothing after it, the call ends. Where the
   * provider's REST API is configured (Twilio, Plivo), the call itself is hung up there first.
   */
  async hangUp(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#stop();
    if (this.#transferred) {
      // The provider has the call now and ends the stream itself as it runs the transfer: a REST
      // hang-up would end the transferred call, and closing first could race Plivo's transfer
      // with the rest of its `<Stream>` document. So wait for the provider, a while.
      await this.#streamClosed(TRANSFER_HANDOVER_MS);
      this.#close(CLOSE_NORMAL, "transferred");
      return;
    }
    if (this.options.control && this.callId) {
      try {
        const answer = await this.options.control.hangUp(this.callId);
        log.info("hung up", { carrier: this.carrier, call_id: this.callId, answer });
      } catch (err) {
        log.warn("hang-up failed", { carrier: this.carrier, cause: (err as Error).message });
      }
    }
    this.#close(CLOSE_NORMAL, "hung up");
  }

  async transfer(target: string, warm?: WarmRequest): Promise<TransferResult> {
    if (this.#ended) return { ok: false, detail: "The call has ended." };
    if (warm) return { ok: false, reason: "refused", detail: warmRefusal(this.carrier) };
    if (!this.options.control) {
      return {
        ok: false,
        detail: this.dialect.noTransfer ??
          `${this.carrier} calls cannot be transferred by this service: ` +
            "the provider's stream has no transfer message and no REST transfer is configured.",
      };
    }
    this.#transferring = this.options.control.transfer(this.callId, target);
    const result = await this.#transferring;
    // The provider now runs the new instructions and ends the stream: that end is the transfer.
    if (result.ok) this.#transferred = true;
    this.#transferring = undefined;
    return result;
  }

  /**
   * The provider ended the stream. During a transfer that is the transfer taking effect, and it
   * can come before the REST answer does (the provider runs the new instructions at once): the
   * end's reason waits for that answer.
   */
  #farEnded(): void {
    const pending = this.#transferring;
    if (!pending) return this.#end(this.#transferred ? "transferred" : "caller_hung_up");
    this.#stop();
    pending.then(
      (r) => this.#end(r.ok ? "transferred" : "caller_hung_up"),
      () => this.#end("caller_hung_up"),
    );
  }

  get pacing(): { skipped: number; histogram?: LatenessHistogram } {
    return { skipped: this.#pacer.skipped, histogram: this.#pacer.histogram };
  }

  stats(): Record<string, number> {
    return {
      ...this.#counts,
      caller_frames: this.#timeline.frames,
      concealed_frames: this.#timeline.concealedFrames,
      pacer_skipped: this.#pacer.skipped,
    };
  }

  #handle(event: StreamEvent): void {
    switch (event.kind) {
      case "media":
        this.#counts.media_in++;
        if (!this.#accepted) {
          this.#counts.media_before_accept++;
          return;
        }
        this.#timeline.push(this.#pcmOf(event.payload), event.timestampMs);
        return;
      case "dtmf":
        if (this.#ended || !DTMF_DIGIT.test(event.digit)) return;
        this.#counts.dtmf++;
        // Held until the call listens (held_keys.ts): it is made after the token is checked.
        this.onDtmf.emit({ digit: event.digit, durationMs: event.durationMs });
        return;
      case "played":
        this.#counts.marks_played++;
        return;
      case "stop":
        this.#farEnded();
        this.#close(CLOSE_NORMAL, "stopped");
        return;
      default:
        return;
    }
  }

  #pcmOf(payload: string): Int16Array {
    const bytes = Uint8Array.fromBase64(payload);
    if (this.#format.audio === "mulaw") return g711Decode("PCMU", bytes);
    // 16-bit little-endian; an odd last byte is not a sample.
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const pcm = new Int16Array(bytes.length >> 1);
    for (let i = 0; i < pcm.length; i++) pcm[i] = view.getInt16(i * 2, true);
    return pcm;
  }

  #tick(): void {
    if (this.#ended) return;
    const timeout = this.options.mediaTimeoutMs ?? 10_000;
    if (performance.now() - this.#lastMessageAt > timeout) {
      this.#end("media_timeout");
      this.#close(CLOSE_NORMAL, "no media");
      return;
    }
    this.#voice.tick();
  }

  #send(message: unknown): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify(message));
  }

  #end(reason: LineEndReason): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#stop();
    if (this.#accepted) this.onEnded.emit(reason);
  }

  #stop(): void {
    clearTimeout(this.#startTimer);
    if (this.#stopped) return;
    this.#stopped = true;
    this.#pacer.stop();
    this.#voice.close();
    this.#edge?.close();
  }

  /** Resolves when the socket has closed, or after `ms`. */
  #streamClosed(ms: number): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.socket.addEventListener("close", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  #close(code: number, reason: string): void {
    // On the next turn of the event loop: a Deno server socket closed while it is dispatching a
    // message it received drops the connection without the close frame (seen 9 times in 10 with
    // a client still sending), and the provider would never learn why.
    setTimeout(() => this.#closeNow(code, reason), 0);
  }

  #closeNow(code: number, reason: string): void {
    if (
      this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING
    ) {
      this.socket.close(code, reason);
    }
  }
}
