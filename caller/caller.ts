/**
 * A test caller that behaves on the wire like the Pipecat browser client
 * (@pipecat-ai/small-webrtc-transport 1.10.8, see browser-client-protocol.md), built on werift:
 * the same three transceivers and "chat" channel, the same offer POST and candidate PATCH bodies,
 * RTVI client-ready, "ping: <ms>" keep-alives, trackStatus messages; plus real-time Opus audio
 * from a WAV and a record of what comes back (decoded 48 kHz PCM and packet arrival times).
 */

import {
  type RTCDataChannel,
  RTCPeerConnection,
  type RTCRtpTransceiver,
  type RtpPacket,
} from "werift";
import { Pacer } from "../media/audio/pacer.ts";
import { peerConfig } from "../media/rtc/config.ts";
import "../media/rtc/werift_dtls_patch.ts";
import "../media/rtc/werift_sctp_patch.ts";
import { Emitter } from "../media/rtc/emitter.ts";
import { OpusRtpSender } from "../media/rtc/rtp_sender.ts";
import {
  keepCandidates,
  listCandidates,
  stripCandidates,
  withoutUdpCandidates,
} from "../media/rtc/sdp.ts";
import { FRAME_SAMPLES_48K, OpusDecoder, OpusEncoder } from "../wasm/opus.ts";
import { FrameTimes } from "./turn_latency.ts";
import { readWav, rms, to48k } from "./wav.ts";
import { RTVI_VERSION } from "../proto/rtvi.ts";

export interface CallerOptions {
  /** webrtc_request_params.endpoint */
  offerUrl: string;
  /** webrtc_request_params.headers (e.g. Authorization: Bearer <token>). */
  headers?: Record<string, string>;
  /** webrtc_request_params.requestData; omitted from the body when falsy, like the client. */
  requestData?: unknown;
  /** Addresses the caller's ICE uses (default ["127.0.0.1"]). */
  iceAddresses?: string[];
  /**
   * true (default, the client's default): the offer carries no candidates; they are PATCHed
   * after the answer. false: like `waitForICEGathering: true`, candidates inside the offer.
   */
  trickle?: boolean;
  /** Keep-alive period once the channel is open (default 1000 ms, the client's). */
  pingIntervalMs?: number;
  /**
   * The pc_id of a connection this caller replaces: its first offer is sent with that pc_id
   * and `restart_pc: true`, as the client does after ICE fails (§1.6).
   */
  restartOf?: string;
  /**
   * As if the caller's network blocked UDP: the caller gathers TCP candidates and neither offers
   * nor uses a UDP one, so ICE can only succeed over TCP (RFC 6544).
   */
  udpBlocked?: boolean;
  /**
   * Called with the peer connection once its ICE sockets exist (after gathering, before the offer
   * goes out): where an impairment harness (caller/lossy_link.ts) puts itself, so loss
   * covers the whole call, ICE checks and the DTLS/SCTP handshakes included.
   */
  onSockets?: (pc: RTCPeerConnection) => void;
}

/** An RTVI envelope (or any JSON the server sends on the channel). */
export interface RtviMessage {
  label?: string;
  type: string;
  id?: string;
  data?: unknown;
  message?: unknown;
}

interface Microphone {
  queue: { pcm: Int16Array; offset: number; started?: (t: number) => void; done: () => void }[];
}

export interface Arrival {
  /** performance.now() when the packet arrived. */
  at: number;
  sequenceNumber: number;
  timestamp: number;
  bytes: number;
}

export class CallerHttpError extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`offer request failed with HTTP ${status}: ${body.slice(0, 200)}`);
    this.name = "CallerHttpError";
  }
}

export class TestCaller {
  readonly pc: RTCPeerConnection;
  readonly audio: RTCRtpTransceiver;
  readonly chat: RTCDataChannel;
  /** pc_id from the answer. */
  pcId: string | null = null;
  /** JSON messages received on the chat channel, in order. */
  readonly messages: RtviMessage[] = [];
  readonly onMessage = new Emitter<[RtviMessage]>();
  /** Bot audio packets as they arrived. */
  readonly arrivals: Arrival[] = [];
  /**
   * Every frame sent (when, and where its voice ends) and received (when, how loud): end of
   * speech to first bot audio as the caller hears it (caller/turn_latency.ts).
   */
  readonly frames = new FrameTimes();
  /** Each received frame's arrival time and loudness, to see when the bot spoke. */
  get heardFrames(): { at: number; rms: number }[] {
    return this.frames.heard;
  }
  /** performance.now() of each frame handed to the network by stream(). */
  readonly sentAt: number[] = [];
  /** Frames the pacer skipped after a stall: never sent, but the RTP clock moved over them. */
  skippedFrames = 0;
  pingsSent = 0;

  #opts: CallerOptions;
  #allowed: Set<string>;
  #decoder = new OpusDecoder({ sampleRate: 48000 });
  #pcm: Int16Array[] = [];
  #lastSeq: number | undefined;
  #tx: OpusRtpSender;
  #ping: ReturnType<typeof setInterval> | undefined;
  #pacer: Pacer | undefined;
  #endStream: (() => void) | undefined;
  #closed = false;
  #opened: Promise<void>;
  #socketsShown = false;

  private constructor(opts: CallerOptions) {
    this.#opts = opts;
    const ice = { iceAddresses: opts.iceAddresses ?? ["127.0.0.1"] };
    this.#allowed = new Set(ice.iceAddresses);
    this.pc = new RTCPeerConnection(peerConfig({ ...ice, iceTcp: opts.udpBlocked }));
    // Same order and directions as the client's addInitialTransceivers (§2.1).
    this.audio = this.pc.addTransceiver("audio", { direction: "sendrecv" });
    this.pc.addTransceiver("video", { direction: "sendrecv" });
    this.pc.addTransceiver("video", { direction: "sendonly" });
    this.chat = this.pc.createDataChannel("chat", { ordered: true });
    this.#tx = new OpusRtpSender(this.audio.sender);
    this.audio.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((p) => this.#onRtp(p)));
    this.chat.onMessage.subscribe((d) =>
      this.#onChat(typeof d === "string" ? d : new TextDecoder().decode(d))
    );
    this.#opened = new Promise((resolve) => {
      this.chat.stateChanged.subscribe((s) => {
        if (s === "open") {
          this.#onOpen();
          resolve();
        }
      });
    });
  }

  /** Offer POST, answer, candidate PATCH. Rejects with CallerHttpError on a non-2xx answer. */
  static async connect(opts: CallerOptions): Promise<TestCaller> {
    const caller = new TestCaller(opts);
    try {
      caller.pcId = opts.restartOf ?? null;
      await caller.#negotiate(opts.restartOf !== undefined);
      return caller;
    } catch (e) {
      await caller.hangUp();
      throw e;
    }
  }

  /** Re-offers on the same peer connection (the client's reaction to a "renegotiate" message). */
  renegotiate(): Promise<void> {
    return this.#negotiate(false);
  }

  /** Resolves when the chat channel is open (ICE, DTLS and SCTP are up). */
  waitOpen(timeoutMs = 10000): Promise<void> {
    return withTimeout(this.#opened, timeoutMs, "chat channel open");
  }

  /** Sends `{label:"rtvi-ai", type, id, data}`; returns the id. */
  sendRtvi(type: string, data: unknown = {}): string {
    const id = crypto.randomUUID().slice(0, 8);
    this.chat.send(JSON.stringify({ label: "rtvi-ai", type, id, data }));
    return id;
  }

  /** Sends client-ready as client-js 1.13.1 does; returns its id. */
  sendClientReady(): string {
    return this.sendRtvi("client-ready", {
      version: RTVI_VERSION,
      about: {
        library: "@pipecat-ai/client-js",
        library_version: "1.13.1",
        platform: "Deno",
        platform_version: Deno.version.deno,
        platform_details: { browser: "werift test caller" },
      },
    });
  }

  /**
   * When the first received frame louder than the bot level (caller/turn_latency.ts) at `since`
   * or later arrived, waiting up to `timeoutMs` for it; null if none came.
   */
  async audioAfter(since: number, timeoutMs: number): Promise<number | null> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const at = this.frames.firstAudio(since);
      if (at !== null || performance.now() >= until) return at;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** The first message (already received or future) that matches. */
  waitForMessage(match: (m: RtviMessage) => boolean, timeoutMs = 10000): Promise<RtviMessage> {
    const found = this.messages.find(match);
    if (found) return Promise.resolve(found);
    let off = () => {};
    const p = new Promise<RtviMessage>((resolve) => {
      off = this.onMessage.on((m) => {
        if (match(m)) resolve(m);
      });
    });
    return withTimeout(p, timeoutMs, "chat message").finally(off);
  }

  /** Waits for the channel, sends client-ready and resolves with bot-ready (what connect() does). */
  async ready(timeoutMs = 10000): Promise<RtviMessage> {
    await this.waitOpen(timeoutMs);
    this.sendClientReady();
    return this.waitForMessage((m) => m.label === "rtvi-ai" && m.type === "bot-ready", timeoutMs);
  }

  /** PATCHes candidates as the client's flushIceCandidates does. */
  async patchCandidates(
    candidates: { candidate: string; sdp_mid: string; sdp_mline_index: number }[],
  ) {
    const res = await fetch(this.#opts.offerUrl, {
      method: "PATCH",
      headers: this.#headers(),
      body: JSON.stringify({ pc_id: this.pcId, candidates }),
    });
    await res.body?.cancel();
    return res.status;
  }

  /**
   * Streams a 16-bit PCM WAV (48 kHz, or lower and upsampled) as 20 ms Opus frames in real time.
   * Resolves when the last frame has been sent.
   */
  async streamWav(path: string): Promise<void> {
    await this.stream(to48k(await readWav(path)));
  }

  /** Streams 48 kHz mono PCM in real time (the last partial frame is zero-padded). */
  stream(pcm: Int16Array): Promise<void> {
    if (this.#pacer?.running) throw new Error("already streaming");
    const encoder = new OpusEncoder();
    const frame = new Int16Array(FRAME_SAMPLES_48K);
    const frames = Math.ceil(pcm.length / FRAME_SAMPLES_48K);
    let next = 0;
    return new Promise<void>((resolve) => {
      this.#endStream = resolve;
      const pacer = new Pacer((t) => {
        if (this.#closed || t.frame >= frames) {
          pacer.stop();
          encoder.close();
          resolve();
          return;
        }
        // Frames the pacer skipped after a stall are dropped, as a live microphone's would be;
        // the RTP clock still moves over them.
        if (t.frame > next) this.#skip(t.frame - next);
        next = t.frame + 1;
        const start = t.frame * FRAME_SAMPLES_48K;
        frame.fill(0);
        frame.set(pcm.subarray(start, Math.min(start + FRAME_SAMPLES_48K, pcm.length)));
        this.#tx.send(encoder.encode(frame));
        const at = performance.now();
        this.sentAt.push(at);
        this.frames.addSent(at, frame);
      });
      this.#pacer = pacer;
      pacer.start();
    });
  }

  #mic: Microphone | undefined;

  #skip(frames: number): void {
    this.skippedFrames += frames;
    this.#tx.skip(frames);
  }

  /**
   * A live microphone: from now on a 20 ms frame goes out every 20 ms, silence unless something
   * is being said, as a browser's would. Use `say()` to speak into it.
   */
  openMicrophone(): void {
    if (this.#mic) return;
    if (this.#pacer?.running) throw new Error("already streaming");
    const mic: Microphone = { queue: [] };
    this.#mic = mic;
    const encoder = new OpusEncoder();
    const frame = new Int16Array(FRAME_SAMPLES_48K);
    let next = 0;
    const pacer = new Pacer((t) => {
      if (this.#closed) {
        pacer.stop();
        encoder.close();
        return;
      }
      if (t.frame > next) this.#skip(t.frame - next);
      next = t.frame + 1;
      frame.fill(0);
      const item = mic.queue[0];
      if (item) {
        if (item.offset === 0) item.started?.(performance.now());
        const part = item.pcm.subarray(item.offset, item.offset + FRAME_SAMPLES_48K);
        frame.set(part);
        item.offset += FRAME_SAMPLES_48K;
        if (item.offset >= item.pcm.length) {
          mic.queue.shift();
          item.done();
        }
      }
      this.#tx.send(encoder.encode(frame));
      const at = performance.now();
      this.sentAt.push(at);
      this.frames.addSent(at, frame);
    });
    this.#pacer = pacer;
    pacer.start();
  }

  /**
   * Says 48 kHz mono PCM into the open microphone after whatever is queued. Resolves when the
   * last frame was sent, with performance.now() of the first frame.
   */
  say(pcm48k: Int16Array): Promise<{ startedAt: number; endedAt: number }> {
    if (!this.#mic) this.openMicrophone();
    let startedAt = 0;
    return new Promise((resolve) => {
      this.#mic!.queue.push({
        pcm: pcm48k,
        offset: 0,
        started: (t) => (startedAt = t),
        done: () => resolve({ startedAt, endedAt: performance.now() }),
      });
    });
  }

  /** Everything received so far, decoded at 48 kHz mono, lost packets concealed. */
  receivedPcm(): Int16Array {
    const out = new Int16Array(this.#pcm.reduce((a, p) => a + p.length, 0));
    let o = 0;
    for (const p of this.#pcm) (out.set(p, o), o += p.length);
    return out;
  }

  async hangUp(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ping !== undefined) clearInterval(this.#ping);
    this.#pacer?.stop();
    this.#endStream?.();
    this.#decoder.close();
    // client.disconnect(): closes the channel, then the peer connection; sends nothing else.
    if (this.chat.readyState === "open") this.chat.close();
    await this.pc.close();
    this.onMessage.clear();
  }

  async #negotiate(restart: boolean): Promise<void> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    await waitGathered(this.pc);
    if (!this.#socketsShown) (this.#socketsShown = true, this.#opts.onSockets?.(this.pc));
    const kept = keepCandidates(this.pc.localDescription!.sdp, this.#allowed);
    const full = this.#opts.udpBlocked ? withoutUdpCandidates(kept) : kept;
    const trickle = this.#opts.trickle ?? true;
    const body: Record<string, unknown> = {
      sdp: trickle ? stripCandidates(full) : full,
      type: "offer",
      pc_id: this.pcId,
      restart_pc: restart,
    };
    if (this.#opts.requestData) body.requestData = this.#opts.requestData;
    const res = await fetch(this.#opts.offerUrl, {
      method: "POST",
      headers: this.#headers(),
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new CallerHttpError(res.status, text);
    const answer = JSON.parse(text) as { sdp: string; type: "answer"; pc_id: string };
    const sdp = this.#opts.udpBlocked ? withoutUdpCandidates(answer.sdp) : answer.sdp;
    await this.pc.setRemoteDescription({ type: answer.type, sdp });
    this.pcId = answer.pc_id;
    if (trickle) {
      // The client batches its queued candidates after the answer; one batch here.
      const candidates = listCandidates(full).map((candidate) => ({
        candidate,
        sdp_mid: "0",
        sdp_mline_index: 0,
      }));
      if (candidates.length) await this.patchCandidates(candidates);
    }
  }

  #headers(): Headers {
    return new Headers({ "Content-Type": "application/json", ...this.#opts.headers });
  }

  #onOpen(): void {
    // The client reports its three transceivers right after the channel opens (§2.3).
    for (const receiver_index of [0, 1, 2]) {
      this.chat.send(JSON.stringify({
        type: "signalling",
        message: { type: "trackStatus", receiver_index, enabled: receiver_index === 0 },
      }));
    }
    this.#ping = setInterval(() => {
      if (this.chat.readyState !== "open") return;
      this.chat.send(`ping: ${Date.now()}`);
      this.pingsSent++;
    }, this.#opts.pingIntervalMs ?? 1000);
  }

  #onChat(text: string): void {
    let msg: RtviMessage;
    try {
      msg = JSON.parse(text);
    } catch {
      return; // the client drops non-JSON with a log line
    }
    this.messages.push(msg);
    this.onMessage.emit(msg);
  }

  #onRtp(p: RtpPacket): void {
    if (this.#closed) return;
    const h = p.header;
    this.arrivals.push({
      at: performance.now(),
      sequenceNumber: h.sequenceNumber,
      timestamp: h.timestamp,
      bytes: p.payload.length,
    });
    // Conceal short gaps so the PCM timeline matches the sender's; ignore reordering.
    if (this.#lastSeq !== undefined) {
      const gap = (h.sequenceNumber - this.#lastSeq + 0x10000) & 0xffff;
      if (gap === 0 || gap > 0x8000) return;
      for (let i = 1; i < gap && i <= 10; i++) this.#pcm.push(this.#decoder.conceal().slice());
    }
    this.#lastSeq = h.sequenceNumber;
    let pcm: Int16Array;
    try {
      pcm = this.#decoder.decode(p.payload).slice();
    } catch {
      pcm = this.#decoder.conceal().slice();
    }
    this.#pcm.push(pcm);
    this.frames.addHeard(performance.now(), rms(pcm));
  }
}

function waitGathered(pc: RTCPeerConnection, timeoutMs = 5000): Promise<void> {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return withTimeout(
    new Promise<void>((resolve) => {
      const { unSubscribe } = pc.iceGatheringStateChange.subscribe((s) => {
        if (s === "complete") (unSubscribe(), resolve());
      });
    }),
    timeoutMs,
    "ICE gathering",
  );
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
