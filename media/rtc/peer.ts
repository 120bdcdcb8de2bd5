/**
 * The worker's side of one WebRTC call: answers the Pipecat small-webrtc client's offer with
 * werift (browser-client-protocol.md §1.4, §2.2) and exposes the few things a call needs —
 * remote audio RTP, the client's "chat" data channel, connection states, and an Opus RTP sender
 * on the mid-0 audio m-line.
 */

import {
  type MediaStreamTrack,
  type RTCDataChannel,
  RTCPeerConnection,
  type RTCRtpTransceiver,
  type RtpPacket,
} from "werift";
import "./werift_dtls_patch.ts";
import "./werift_sctp_patch.ts";
import "./werift_ice_ports_patch.ts";
import { type IceOptions, peerConfig } from "./config.ts";
import { Emitter } from "./emitter.ts";
import { OpusRtpSender } from "./rtp_sender.ts";
import { boundSentInfos } from "./werift_sent_infos_patch.ts";
import { keepCandidates, listCandidates, missingForACall } from "./sdp.ts";

export interface SessionDescriptionInit {
  type: "offer" | "answer";
  sdp: string;
}

/** A trickled candidate as the Pipecat client PATCHes it (snake_case fields). */
export interface TrickleCandidate {
  candidate: string;
  sdp_mid?: string | null;
  sdp_mline_index?: number | null;
}

export interface PeerOptions extends IceOptions {
  /** Longest wait for ICE gathering before answering anyway (default 5000 ms). */
  gatherTimeoutMs?: number;
  /** Chat messages kept while the channel is not open yet (default 50, like Pipecat). */
  maxQueuedChat?: number;
  /** pc_id to use (default: a fresh random id). */
  id?: string;
}

export type PeerState = "new" | "connecting" | "connected" | "disconnected" | "failed" | "closed";

/** The offer cannot be answered whatever the retry (signalling should reply 4xx). */
/** The browser client's offer is about 4 KiB with 4 sections; these bound what werift is given. */
export const MAX_SDP_BYTES = 16 * 1024;
export const MAX_MEDIA_SECTIONS = 8;

/**
 * Why an offer's shape is refused before werift sees it, or undefined. Found by fuzzing: a section
 * without `a=mid` made werift throw after accepting the offer, and many unbundled sections each
 * opened their own transports (590 sockets and a 0.8 s stall for one 55 KB offer).
 */
export function sdpShapeProblem(sdp: string): string | undefined {
  if (sdp.length > MAX_SDP_BYTES) return `the offer is over ${MAX_SDP_BYTES} bytes`;
  const sections = sdp.split(/\r?\n(?=m=)/).slice(1);
  if (sections.length > MAX_MEDIA_SECTIONS) {
    return `the offer has over ${MAX_MEDIA_SECTIONS} media sections`;
  }
  const mids = sections.map((m) => m.match(/^a=mid:(\S+)/m)?.[1]);
  if (mids.some((mid) => mid === undefined)) return "every media section needs an a=mid";
  if (new Set(mids).size !== mids.length) return "media section mids must be unique";
  const bundle = sdp.match(/^a=group:BUNDLE ([^\r\n]*)/m)?.[1].trim().split(/\s+/);
  if (!bundle || mids.some((mid) => !bundle.includes(mid!))) {
    return "every media section must be in the BUNDLE group";
  }
  return undefined;
}

export class OfferError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OfferError";
  }
}

/**
 * The worker bound no ICE socket for the answer: every port of RTC_PORTS is taken (by its other
 * calls, or by something else on the host). Not the offer's fault; a later try may find one.
 */
export class NoMediaPortError extends Error {
  constructor() {
    super("no port of RTC_PORTS is free for the call's media");
    this.name = "NoMediaPortError";
  }
}

export const CHAT_LABEL = "chat";

/** werift's SCTP queues (sentQueue is private in its types): chunks not yet acknowledged. */
interface SctpQueues {
  outboundQueue?: { userData?: Uint8Array }[];
  sentQueue?: { userData?: Uint8Array }[];
}

export class WorkerPeer {
  readonly id: string;
  readonly pc: RTCPeerConnection;
  /** Remote (caller) audio RTP packets from the mid-0 audio m-line. */
  readonly onAudioRtp = new Emitter<[RtpPacket]>();
  readonly onChatOpen = new Emitter();
  /** Text frames on the chat channel (binary frames are decoded as UTF-8). */
  readonly onChatMessage = new Emitter<[string]>();
  readonly onChatClose = new Emitter();
  readonly onState = new Emitter<[PeerState]>();

  #options: PeerOptions;
  #allowed: Set<string>;
  #audio: RTCRtpTransceiver | undefined;
  #rtp: OpusRtpSender | undefined;
  #tracks = new Set<MediaStreamTrack>();
  #chat: RTCDataChannel | undefined;
  #queue: string[] = [];
  #closed = false;
  #lastState: PeerState = "new";

  private constructor(options: PeerOptions) {
    this.#options = options;
    this.#allowed = new Set(options.iceAddresses);
    this.id = options.id ?? `pc_${crypto.randomUUID().replaceAll("-", "")}`;
    // TCP candidates unless told otherwise: UDP pairs rank first, TCP is the way in without UDP.
    const ice = { ...options, preferRed: true, iceTcp: options.iceTcp ?? true };
    this.pc = new RTCPeerConnection(peerConfig(ice));
    this.pc.connectionStateChange.subscribe((s) => this.#setState(s));
    this.pc.onDataChannel.subscribe((dc) => this.#adoptChannel(dc));
  }

  /** Creates a peer for `offer` and returns it with the complete answer (candidates inside). */
  static async answer(
    offer: SessionDescriptionInit,
    options: PeerOptions,
  ): Promise<{ peer: WorkerPeer; answer: SessionDescriptionInit }> {
    const peer = new WorkerPeer(options);
    try {
      const answer = await peer.#answer(offer);
      return { peer, answer };
    } catch (e) {
      await peer.close();
      throw e;
    }
  }

  /**
   * Answers a new offer on this peer (Pipecat's in-place renegotiation, `restart_pc: false`).
   * An offer with fresh ICE credentials restarts ICE; werift gathers again before the answer.
   */
  renegotiate(offer: SessionDescriptionInit): Promise<SessionDescriptionInit> {
    if (this.#closed) throw new Error("peer is closed");
    return this.#answer(offer);
  }

  /** Adds a trickled candidate; returns false for the empty end-of-candidates marker. */
  async addIceCandidate(c: TrickleCandidate): Promise<boolean> {
    const candidate = c.candidate?.trim() ?? "";
    if (candidate === "") return false;
    await this.pc.addIceCandidate({
      candidate: candidate.replace(/^a=/, ""),
      sdpMid: c.sdp_mid ?? undefined,
      sdpMLineIndex: c.sdp_mline_index ?? undefined,
    });
    return true;
  }

  get state(): PeerState {
    return this.pc.connectionState;
  }

  /** The Opus RTP sender on the mid-0 audio m-line. */
  get audio(): OpusRtpSender {
    if (!this.#rtp) throw new Error("no audio sender before the offer is answered");
    return this.#rtp;
  }

  get chatOpen(): boolean {
    return this.#chat?.readyState === "open";
  }

  /** Sends a text frame on the chat channel, or queues it until the channel opens. */
  sendChat(text: string): void {
    if (this.#chat?.readyState === "open") {
      this.#chat.send(text);
      return;
    }
    const max = this.#options.maxQueuedChat ?? 50;
    if (this.#queue.length >= max) this.#queue.shift();
    this.#queue.push(text);
  }

  /**
   * Waits (at most `maxMs`) until the page has acknowledged everything the chat channel sent, so
   * that the last messages of a call (its end, peerLeft) reach the page before the connection
   * closes. werift's close aborts the SCTP association: a chunk lost on the way and not yet
   * retransmitted would be lost for good, and the page would see a transport error instead of
   * the end. Sent is not enough: a chunk leaves the channel's buffer when it is first put on the
   * wire, and is only delivered once the page's SACK covers it (docs/reliability.md).
   */
  async drainChat(maxMs = 5000): Promise<boolean> {
    const until = performance.now() + maxMs;
    while (this.#chat?.readyState === "open" && this.unacknowledgedChat() > 0) {
      if (performance.now() > until) return false;
      await new Promise((r) => setTimeout(r, 10));
    }
    return true;
  }

  /** Chat bytes not yet acknowledged by the page: buffered, queued in SCTP, or in flight. */
  unacknowledgedChat(): number {
    const sctp = this.pc.sctpTransport?.sctp as unknown as SctpQueues | undefined;
    const buffered = this.#chat?.bufferedAmount ?? 0;
    if (!sctp) return buffered;
    const bytes = (q: { userData?: Uint8Array }[] | undefined) =>
      (q ?? []).reduce((n, c) => n + (c.userData?.length ?? 1), 0);
    return buffered + bytes(sctp.outboundQueue) + bytes(sctp.sentQueue);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.length = 0;
    await this.pc.close();
    // werift does not always report "closed" through connectionStateChange on a local close.
    this.#setState("closed");
    const events = [this.onAudioRtp, this.onChatOpen, this.onChatMessage, this.onChatClose];
    for (const e of events) e.clear();
    this.onState.clear();
  }

  #setState(state: PeerState): void {
    if (state === this.#lastState) return;
    this.#lastState = state;
    this.onState.emit(state);
  }

  async #answer(offer: SessionDescriptionInit): Promise<SessionDescriptionInit> {
    if (offer?.type !== "offer" || typeof offer.sdp !== "string" || !offer.sdp.startsWith("v=")) {
      throw new OfferError("expected {type: 'offer', sdp}");
    }
    const shape = sdpShapeProblem(offer.sdp);
    if (shape) throw new OfferError(shape);
    // Before werift: it would take an offer lacking these and the call would fail unseen later.
    const missing = missingForACall(offer.sdp);
    if (missing) throw new OfferError(missing);
    try {
      await this.pc.setRemoteDescription({ type: "offer", sdp: offer.sdp });
    } catch (e) {
      throw new OfferError(`offer rejected: ${(e as Error).message}`);
    }
    this.#setUpAudio();
    try {
      await this.pc.setLocalDescription(await this.pc.createAnswer());
    } catch (e) {
      // werift throws plain errors for offers it accepted but cannot answer (a section without
      // a mid, no data channel transport): the offer is at fault, not the worker.
      throw new OfferError(`offer cannot be answered: ${(e as Error).message}`);
    }
    await this.#gathered();
    const sdp = this.pc.localDescription?.sdp;
    if (!sdp) throw new Error("no local description after answering");
    const kept = keepCandidates(sdp, this.#allowed);
    if (listCandidates(kept).length === 0) throw new NoMediaPortError();
    return { type: "answer", sdp: kept };
  }

  /** Mid 0 (the first audio m-line) becomes sendrecv: caller audio in, bot audio out. */
  #setUpAudio(): void {
    const audio = this.pc.getTransceivers().find((t) => t.kind === "audio" && !t.stopped);
    if (!audio) throw new OfferError("no audio transceiver after the offer");
    audio.setDirection("sendrecv");
    if (audio !== this.#audio) {
      this.#audio = audio;
      boundSentInfos(audio.sender);
      // RED to the page carries one earlier frame (werift's default is two): the bot's voice
      // costs twice its Opus bytes, not three times; the encoder's FEC covers what RED does not.
      audio.sender.redDistance = 1;
      this.#rtp = new OpusRtpSender(audio.sender);
      audio.onTrack.subscribe((track) => this.#listen(track));
      if (audio.receiver.track) this.#listen(audio.receiver.track);
    }
  }

  #listen(track: MediaStreamTrack): void {
    if (this.#tracks.has(track)) return;
    this.#tracks.add(track);
    track.onReceiveRtp.subscribe((rtp) => this.onAudioRtp.emit(rtp));
  }

  #adoptChannel(dc: RTCDataChannel): void {
    // The client only listens on the channel it created; any other label is not ours.
    if (dc.label !== CHAT_LABEL) return;
    this.#chat = dc;
    dc.onMessage.subscribe((data) => {
      this.onChatMessage.emit(typeof data === "string" ? data : new TextDecoder().decode(data));
    });
    const opened = () => {
      for (const text of this.#queue.splice(0)) dc.send(text);
      this.onChatOpen.emit();
    };
    dc.stateChanged.subscribe((state) => {
      if (state === "open") opened();
      else if (state === "closed") this.onChatClose.emit();
    });
    if (dc.readyState === "open") opened();
  }

  #gathered(): Promise<void> {
    if (this.pc.iceGatheringState === "complete") return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.#options.gatherTimeoutMs ?? 5000);
      const { unSubscribe } = this.pc.iceGatheringStateChange.subscribe((s) => {
        if (s === "complete") done();
      });
      function done() {
        clearTimeout(timer);
        unSubscribe();
        resolve();
      }
    });
  }
}
