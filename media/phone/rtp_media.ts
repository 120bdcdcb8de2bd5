/**
 * The media half of a SIP phone line, for one call: its RTP port, the caller's audio and DTMF
 * in, the bot's audio out. The signalling (the UAS) adds from/to/callId, hangUp, transfer and
 * onEnded to make a PhoneLine (line.ts); this gives the rest: onCallerFrame, onDtmf, play, clear
 * and stats.
 *
 *   const media = await RtpMedia.open({ host: "0.0.0.0" });   // before the answer: its port
 *   answerOffer(offer, { ..., port: media.port })              // media/sip/sdp.ts
 *   media.start(answer.choice);                                // once the call is answered
 *   media.onCallerFrame.on(...); media.onDtmf.on(...); media.play(source);
 *   media.update(newChoice);      // a re-INVITE's answer (hold, a moved stream)
 *   media.onMediaTimeout.on(() => end the call "media_timeout");
 *   await media.close();
 *
 * `RtpMedia.open(options)`: `host` to bind (the address the SDP names, or 0.0.0.0), `port`
 * (default 0: any free one), `clock` (default the worker's shared frame clock), `mediaTimeoutMs`
 * (default 30 s of no RTP while the caller should be sending), `now` (arrival clock, ms).
 * It has the shape of media/sip/rtp_port.ts's RtpPort (port, packets, close), so the UAS can
 * open one in its place.
 *
 * Symmetric RTP (RFC 4961): until the caller's first packet we send to the answer's c=/m=
 * address; from then on to where the caller's packets come from, which is what gets through a
 * NAT in front of the trunk (Asterisk's `rtp_symmetric`, FreeSWITCH's auto-adjust). Which
 * sources may be latched on to (the addresses the call named; any, after probation, with
 * `symmetric`) is rtp_latch.ts's; packets from the others are counted and dropped.
 *
 * Outbound is one packet every 20 ms on the shared frame clock, silence included (no comfort
 * noise, no gaps: trunks and their jitter buffers expect a continuous G.711 stream), the marker
 * bit on the first packet and on the first after a hold.
 */
import type { FrameSource } from "../audio/frame_source.ts";
import { type FrameClock, sharedFrameClock } from "../audio/frame_clock.ts";
import { type LatenessHistogram, Pacer } from "../audio/pacer.ts";
import { Emitter } from "../rtc/emitter.ts";
import type { AnswerChoice } from "../sip/sdp.ts";
import { bindUdp, type DatagramSocket, type Peer } from "../../sip/udp.ts";
import { CallerTimeline, COMFORT_NOISE_PT } from "./caller_timeline.ts";
import { BotEdge, LINE_FRAME } from "./edge_audio.ts";
import type { DtmfDigit } from "./line.ts";
import { buildRtp, parseRtp } from "./rtp_packet.ts";
import { RtpLatch } from "./rtp_latch.ts";
import { evenPortsFrom, type PortRange } from "../../common/port_range.ts";

export interface RtpMediaOptions {
  host: string;
  /** A fixed port; else a free even port of `ports`; else any port the system gives. */
  port?: number;
  /** RTP_PORTS: the range a worker's phone calls take their RTP ports from. */
  ports?: PortRange;
  clock?: FrameClock;
  mediaTimeoutMs?: number;
  now?: () => number;
  /**
   * RTP_SYMMETRIC: media from any address may be latched on to after probation (trunks behind
   * NAT); without it only the SDP's c= address and the signalling's source are heard.
   */
  symmetric?: boolean;
}

export const DEFAULT_MEDIA_TIMEOUT_MS = 30_000;
/** Ticks between media-timeout checks (one second). */
const TIMEOUT_CHECK_TICKS = 50;

export class RtpMedia {
  /** 16 kHz caller frames of 320 samples, one per 20 ms (a reused buffer: copy what you keep). */
  readonly onCallerFrame = new Emitter<[Int16Array]>();
  readonly onDtmf = new Emitter<[DtmfDigit]>();
  /** No RTP for mediaTimeoutMs while the caller should be sending; emitted once. */
  readonly onMediaTimeout = new Emitter<[]>();
  readonly mediaTimeoutMs: number;

  #socket!: DatagramSocket;
  #now: () => number;
  #pacer: Pacer;
  #choice: AnswerChoice | undefined;
  #timeline: CallerTimeline | undefined;
  #bot: BotEdge | undefined;
  #source: FrameSource | undefined;
  /** Where our packets go until the caller's come: the answer's c=/m=. */
  #remote: Peer | undefined;
  /** The caller's source once learnt (rtp_latch.ts): where our packets go from then on. */
  #latch: RtpLatch;
  /** The address the INVITE came from: heard as the SDP's c= is. */
  #signalling: string | undefined;
  #held = false;
  #closed = false;
  #timedOut = false;
  #lastPacketAt = 0;
  // Our stream: random SSRC, sequence and timestamp starts (RFC 3550 section 5.1).
  readonly #ssrc = crypto.getRandomValues(new Uint32Array(1))[0];
  #seq = crypto.getRandomValues(new Uint16Array(1))[0];
  #ts = crypto.getRandomValues(new Uint32Array(1))[0];
  #marker = true;
  #lastFrame = -1;
  #counts = {
    packetsIn: 0,
    bytesIn: 0,
    packetsOut: 0,
    bytesOut: 0,
    voicedOut: 0,
    malformed: 0,
    rtcp: 0,
    foreign: 0,
    beforeStart: 0,
    latches: 0,
    unknownPayload: 0,
    listenerErrors: 0,
  };

  private constructor(options: RtpMediaOptions) {
    this.mediaTimeoutMs = options.mediaTimeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS;
    this.#latch = new RtpLatch(options.symmetric ?? false, this.#counts);
    this.#now = options.now ?? (() => performance.now());
    this.#pacer = new Pacer((t) => this.#tick(t.frame), {
      clock: options.clock ?? sharedFrameClock(),
    });
  }

  static async open(options: RtpMediaOptions): Promise<RtpMedia> {
    const media = new RtpMedia(options);
    const receive = (bytes: Uint8Array, from: Peer) => media.#receive(bytes, from);
    if (options.port !== undefined || !options.ports) {
      media.#socket = await bindUdp(options.host, options.port ?? 0, receive);
      return media;
    }
    // Ports other calls (or other programs) hold are skipped: the first free one is ours.
    for (const port of evenPortsFrom(options.ports)) {
      try {
        media.#socket = await bindUdp(options.host, port, receive);
        return media;
      } catch (err) {
        if ((err as { code?: string }).code !== "EADDRINUSE") throw err;
      }
    }
    const { first, last } = options.ports;
    throw new Error(`no free RTP port in RTP_PORTS ${first}-${last}`);
  }

  /** The local RTP port (for the SDP answer). */
  get port(): number {
    return this.#socket.port;
  }

  /** RTP packets taken in so far (rtp_port.ts's count). */
  get packets(): number {
    return this.#counts.packetsIn;
  }

  /**
   * Begins the call's media with the answer's choice: packets are taken, and sent every 20 ms.
   * `signalling` is the address the INVITE came from, heard as the SDP's c= address is.
   */
  start(choice: AnswerChoice, signalling?: string): void {
    if (this.#closed || this.#choice) return;
    this.#signalling = signalling;
    this.#apply(choice);
    this.#lastPacketAt = this.#now();
    this.#pacer.start();
  }

  /**
   * A re-INVITE's answer: the direction (hold), and maybe a new address or payload types. A new
   * address, or a codec change, starts the caller's stream anew and forgets the latched source.
   */
  update(choice: AnswerChoice): void {
    if (this.#closed) return;
    if (!this.#choice) return this.start(choice);
    this.#apply(choice);
  }

  /** The caller put us on hold (true) or took us off it: we stop sending while held. */
  hold(on: boolean): void {
    if (on === this.#held) return;
    this.#held = on;
    if (!on) {
      this.#marker = true;
      // Music on hold is optional: the silence of a hold says nothing about the line.
      this.#lastPacketAt = this.#now();
    }
  }

  /** What the bot says from now on: pulled every 20 ms (48 kHz frames), silence when it gives none. */
  play(source: FrameSource): void {
    this.#source = source;
  }

  /** Nothing is queued on RTP (each 20 ms is pulled as it goes): there is nothing to drop. */
  clear(): void {}

  /** The outbound pacer's live counts (PhoneLine.pacing). */
  get pacing(): { skipped: number; histogram?: LatenessHistogram } {
    return { skipped: this.#pacer.skipped, histogram: this.#pacer.histogram };
  }

  stats(): Record<string, number> {
    const t = this.#timeline?.stats();
    const d = this.#timeline?.dtmf;
    const p = this.#pacer.stats();
    return {
      ...this.#counts,
      received: t?.received ?? 0,
      lost: t?.lost ?? 0,
      late: t?.late ?? 0,
      duplicates: t?.duplicates ?? 0,
      unknownPayload: this.#counts.unknownPayload + (t?.unknownPayload ?? 0),
      callerFrames: t?.frames ?? 0,
      concealedFrames: (t?.concealedSamples ?? 0) / LINE_FRAME,
      silenceFrames: (t?.silenceSamples ?? 0) / LINE_FRAME,
      unfilledFrames: (t?.unfilledSamples ?? 0) / LINE_FRAME,
      restarts: t?.restarts ?? 0,
      jitterMs: t?.jitterMs ?? 0,
      jitterDepth: t?.depth ?? 0,
      dtmfDigits: d?.digits ?? 0,
      dtmfRedundant: d?.redundant ?? 0,
      dtmfEndLost: d?.endLost ?? 0,
      ticks: p.ticks,
      skippedTicks: p.skipped,
    };
  }

  /** Stops sending, plays out what the jitter buffer holds, closes the port. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#pacer.stop();
    this.#timeline?.flush();
    this.#timeline?.close();
    this.#bot?.close();
    await this.#socket.close();
  }

  #apply(choice: AnswerChoice): void {
    const old = this.#choice;
    this.#choice = choice;
    // Our direction mirrors the caller's: recvonly or inactive means the caller holds us.
    this.hold(choice.direction === "recvonly" || choice.direction === "inactive");
    const moved = !old || old.remoteAddress !== choice.remoteAddress ||
      old.remotePort !== choice.remotePort;
    if (moved) {
      // 0.0.0.0 (RFC 2543 hold) names no address: send nowhere until the caller's packets come.
      const none = choice.remoteAddress === "0.0.0.0" || choice.remoteAddress === "::" ||
        choice.remotePort === 0;
      this.#remote = none ? undefined : { address: choice.remoteAddress, port: choice.remotePort };
      this.#latch.reset([this.#remote?.address, this.#signalling], this.#now());
    }
    if (
      !old || old.codec !== choice.codec || old.payloadType !== choice.payloadType ||
      old.dtmfPayloadType !== choice.dtmfPayloadType || old.redPayloadType !== choice.redPayloadType
    ) {
      this.#timeline?.flush();
      this.#timeline?.close();
      this.#timeline = new CallerTimeline({
        law: choice.codec,
        payloadType: choice.payloadType,
        dtmfPayloadType: choice.dtmfPayloadType,
        redPayloadType: choice.redPayloadType,
        onFrame: (pcm) => this.#safely(() => this.onCallerFrame.emit(pcm)),
        onDigit: (digit) => this.#safely(() => this.onDtmf.emit(digit)),
      });
      if (old?.codec !== choice.codec) {
        this.#bot?.close();
        this.#bot = new BotEdge(choice.codec);
      }
    }
  }

  #receive(bytes: Uint8Array, from: Peer): void {
    if (this.#closed) return;
    const packet = parseRtp(bytes);
    if (packet === "rtcp") {
      this.#counts.rtcp++;
      return;
    }
    if (typeof packet === "string") {
      this.#counts.malformed++;
      return;
    }
    const choice = this.#choice, timeline = this.#timeline;
    if (!choice || !timeline) {
      this.#counts.beforeStart++;
      return;
    }
    const pt = packet.payloadType;
    if (
      pt !== choice.payloadType && pt !== choice.dtmfPayloadType &&
      pt !== choice.redPayloadType && pt !== COMFORT_NOISE_PT
    ) {
      // Not the stream the answer named: neither heard nor latched on to.
      this.#counts.unknownPayload++;
      return;
    }
    const now = this.#now();
    if (!this.#latch.accept(from, packet.ssrc, packet.sequenceNumber, now)) return;
    this.#lastPacketAt = now;
    this.#counts.packetsIn++;
    this.#counts.bytesIn += bytes.length;
    timeline.push(packet, bytes, now);
  }

  /**
   * Runs a listener: one that throws is counted and logged, so the rest of the packet's frames
   * still go out and the socket's handler never throws (it would take the worker down).
   */
  #safely(emit: () => void): void {
    try {
      emit();
    } catch (e) {
      this.#counts.listenerErrors++;
      console.error("phone media listener failed:", e);
    }
  }

  #tick(frame: number): void {
    if (this.#closed) return;
    // Frames the clock skipped (a stalled event loop) still advance our RTP clock.
    if (this.#lastFrame >= 0 && frame > this.#lastFrame + 1) {
      this.#ts = (this.#ts + (frame - this.#lastFrame - 1) * LINE_FRAME) >>> 0;
    }
    this.#lastFrame = frame;
    if (frame % TIMEOUT_CHECK_TICKS === 0) this.#checkTimeout();
    const choice = this.#choice, bot = this.#bot;
    if (!choice || !bot) return;
    // Not pulled while held: the bot's speech waits for the caller instead of going unheard.
    const to = this.#latch.source ?? this.#remote;
    if (!this.#held && to) this.#send(choice.payloadType, bot, to);
    this.#ts = (this.#ts + LINE_FRAME) >>> 0;
  }

  #send(payloadType: number, bot: BotEdge, to: Peer): void {
    const pcm = this.#source?.next();
    if (this.#closed) return; // the source may end the call
    const payload = bot.encode(pcm);
    if (pcm) this.#counts.voicedOut++;
    const packet = buildRtp({
      marker: this.#marker,
      payloadType,
      sequenceNumber: this.#seq,
      timestamp: this.#ts,
      ssrc: this.#ssrc,
    }, payload);
    this.#socket.send(packet, to);
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#marker = false;
    this.#counts.packetsOut++;
    this.#counts.bytesOut += packet.length;
  }

  #checkTimeout(): void {
    // On hold the caller may send nothing (inactive) or music: its silence is not a dead line.
    if (this.#timedOut || this.#held || !this.#choice) return;
    if (this.#choice.direction === "sendonly") return; // the caller said it would not send
    if (this.#now() - this.#lastPacketAt < this.mediaTimeoutMs) return;
    this.#timedOut = true;
    this.onMediaTimeout.emit();
  }
}
