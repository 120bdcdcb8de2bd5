// A web call's line (line.ts): the page's WebRTC peer (werift), its caller audio through the
// receiver, the bot's voice as Opus, RTVI on the chat channel, liveness and the connect timeout,
// the echo diagnostic, and at the end the page told why and its last messages drained.
import { OpusDecoder } from "../../wasm/opus.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import { Emitter } from "../rtc/emitter.ts";
import type { PeerState, WorkerPeer } from "../rtc/peer.ts";
import { CallerReceiver } from "../rtc/receiver.ts";
import { RtviSession } from "../rtvi/session.ts";
import { callEnded, signalling } from "../rtvi/protocol.ts";
import type { DtmfDigit } from "../phone/line.ts";
import { chatLogData } from "./chat_log.ts";
import type { Conversation } from "./conversation.ts";
import { EchoSource } from "./echo.ts";
import type { CallLine, EndStatus, LinePacing } from "./line.ts";
import { OutboundAudio } from "./outbound.ts";
import type { SessionLog } from "./session_log.ts";

export interface WebLineOptions {
  log: SessionLog;
  /**
   * Hang-up (`no_ping`) when nothing came from the page for this long: no chat frame (pings
   * included) and no audio packet. A page whose pings stop but whose microphone still sends is
   * alive; a caller whose network is gone sends neither.
   */
  livenessMs?: number;
  /** Fail when the peer is not connected this long after the offer. */
  connectTimeoutMs?: number;
  /** Longest wait for the page to acknowledge the call's last messages (END_DRAIN_MS). */
  endDrainMs?: number;
}

/**
 * Longest wait at a call's end for the page to acknowledge its last messages. SCTP retransmits a
 * lost chunk after its RTO (at least 1 s, doubling): 5 s is three tries, enough at 20 % loss.
 */
export const END_DRAIN_MS = 5000;

/** The wait for acknowledgements after an end reason that suggests the page is gone. */
const GONE_DRAIN_MS = 300;

/** End reasons after which the page is probably gone: its last messages get a short wait. */
const PAGE_GONE = new Set(["no_ping", "ice_failed", "hangup", "connect_timeout"]);

export class WebLine implements CallLine {
  readonly channel = "wideband" as const;
  readonly onCallerFrame = new Emitter<[Int16Array]>();
  /** A page presses no phone keys. */
  readonly onDtmf = new Emitter<[DtmfDigit]>();
  readonly onEnded = new Emitter<[string]>();
  readonly onReady = new Emitter<[unknown]>();
  readonly outbound: OutboundAudio;
  readonly page: RtviSession;
  peer: WorkerPeer;

  private readonly log: SessionLog;
  private detach: (() => void)[] = [];
  private timers: ReturnType<typeof setTimeout>[] = [];
  private chatOpened = false;
  /** performance.now() of the caller's last audio packet (liveness, with RTVI's last frame). */
  private lastAudioAt = performance.now();
  private dtlsUp = false;
  private over = false;
  /** The conversation the page talks to once it is on; before, packets are dropped or echoed. */
  private conversation?: Conversation;
  private echoing?: EchoSource;
  /** The echo's decoder, made only if the caller's packets are not 20 ms (echo.ts). */
  private decoder?: OpusDecoder;
  /** The caller's packets back in order and decoded, one frame per 20 ms (rtc/receiver.ts). */
  private receiver = this.newReceiver();

  constructor(peer: WorkerPeer, private readonly opts: WebLineOptions) {
    this.peer = peer;
    this.log = opts.log;
    this.outbound = new OutboundAudio(() => this.peer.audio);
    this.page = new RtviSession((text) => this.sendChat(text), {
      onClientReady: (about) => this.onReady.emit(about),
      onPageMessage: (m) => {
        this.log.add("page", m.type, m.data);
        this.conversation?.onPageMessage(m);
        return { received: true };
      },
      // A typed turn (send-text): a caller turn, not a page message for the brain.
      onSendText: (text) => {
        if (!this.conversation) throw new Error("The call is not listening.");
        this.conversation.onTypedText(text);
      },
      onDisconnectBot: () => this.onEnded.emit("disconnect_bot"),
      // Every frame but pings, before what it causes; a refused one by its size and an excerpt.
      onFrame: (text, refusal) => this.log.add("page", "chat", chatLogData(text, refusal)),
      // The page's own measure of a turn (end of its speech to the bot's first audio it heard).
      onClientLatency: (l) => {
        this.log.add("page", "client_latency", l);
        return this.conversation?.turnLog.heardAtCaller(
          l.turn_id ?? "latest",
          l.end_of_speech_to_audio_ms,
        ) ?? false;
      },
    });
    this.attach(peer);
    this.log.add("worker", "offer_accepted", { pc_id: peer.id });
    this.timers.push(setTimeout(() => {
      if (!this.dtlsUp) this.onEnded.emit("connect_timeout");
    }, opts.connectTimeoutMs ?? 20_000));
    const liveness = opts.livenessMs ?? 3000;
    this.timers.push(setInterval(() => {
      const heardAt = Math.max(this.page.lastHeardAt, this.lastAudioAt);
      if (this.chatOpened && performance.now() - heardAt > liveness) {
        this.onEnded.emit("no_ping");
      }
    }, 250));
  }

  get pacing(): LinePacing {
    return { ...this.outbound.pacing, voiced: this.outbound.voiced };
  }

  /** `restart_pc`: the page built a new peer connection; the call and its RTVI state go on. */
  async replacePeer(peer: WorkerPeer): Promise<void> {
    const old = this.peer;
    for (const off of this.detach.splice(0)) off();
    this.peer = peer;
    this.page.lastHeardAt = this.lastAudioAt = performance.now();
    // The new connection's packets are numbered afresh: what the old one left is played first.
    this.receiver.flush();
    this.receiver.close();
    this.receiver = this.newReceiver();
    this.attach(peer);
    this.log.add("worker", "peer_restarted", { pc_id: peer.id });
    await old.close();
  }

  private attach(peer: WorkerPeer): void {
    this.detach.push(
      peer.onState.on((s) => this.onPeerState(s)),
      peer.onChatOpen.on(() => {
        this.chatOpened = true;
        this.page.lastHeardAt = performance.now();
        // An open data channel runs over DTLS: the transport is up, whatever werift's
        // connectionState says (it can miss "connected" when SCTP came up first, under loss).
        this.transportUp("chat_open");
      }),
      peer.onChatMessage.on((text) => this.page.receive(text)),
      peer.onChatClose.on(() => this.onEnded.emit("hangup")),
      peer.onAudioRtp.on((packet) => {
        this.lastAudioAt = performance.now();
        if (!this.conversation) return this.onEchoAudio(packet.payload);
        this.receiver.push(packet, this.lastAudioAt);
      }),
    );
  }

  /** DTLS is up (the peer said so, or the data channel opened over it): audio starts. */
  private transportUp(by: "connected" | "chat_open"): void {
    if (this.dtlsUp || this.over) return;
    this.dtlsUp = true;
    this.log.add("worker", "dtls_connected", { by });
    this.outbound.start();
  }

  private onPeerState(state: PeerState): void {
    if (state === "connected") this.transportUp("connected");
    else if (state === "failed") this.onEnded.emit("ice_failed");
    else if (state === "closed") this.onEnded.emit("hangup");
  }

  private sendChat(text: string): void {
    this.log.add("to_page", "chat", text);
    this.peer.sendChat(text);
  }

  converse(conversation: Conversation): void {
    this.conversation = conversation;
  }

  play(source: FrameSource, sent?: (pcm: Int16Array | undefined) => void): void {
    // The tap sees the frames the pacer skipped too, so a recording keeps the call's length.
    this.outbound.tap = sent;
    this.outbound.source = source;
  }

  /** Barge-in: the bot stops at the next frame; nothing of it is queued beyond the pacer. */
  clear(): void {}

  /** The echo diagnostic plays packets as they arrive, as it always has. */
  echo(): void {
    this.echoing = new EchoSource();
    this.outbound.source = this.echoing;
  }

  private onEchoAudio(payload: Uint8Array): void {
    if (!this.echoing || this.echoing.pushPacket(payload)) return;
    this.decoder ??= new OpusDecoder({ sampleRate: 48000 });
    try {
      this.echoing.pushDecoded(this.decoder.decode(payload));
    } catch {
      // A corrupt packet is dropped; the next one decodes.
    }
  }

  private newReceiver(): CallerReceiver {
    return new CallerReceiver((pcm) => this.onCallerFrame.emit(pcm));
  }

  /** Stops audio, tells the page why and says goodbye, drains its last messages, closes the peer. */
  async hangUp(end: { status: EndStatus; reason: string }): Promise<void> {
    if (this.over) return;
    this.over = true;
    for (const t of this.timers) clearTimeout(t);
    this.outbound.stop();
    this.decoder?.close();
    if (this.peer.chatOpen) {
      // Why, for the page (it would otherwise only see the connection close), then goodbye.
      this.page.emit("server-message", callEnded(end.status, end.reason));
      this.peer.sendChat(signalling("peerLeft"));
    }
    for (const off of this.detach.splice(0)) off();
    if (this.conversation) {
      this.receiver.flush();
      this.log.add("worker", "caller_audio", receiverCounts(this.receiver));
    }
    this.receiver.close();
    if (this.peer.chatOpen) {
      // The last messages are retransmitted until the page acknowledges them (bounded); briefly
      // when the page is probably gone (a live one acknowledges within a round trip).
      const drainStart = performance.now();
      const bound = PAGE_GONE.has(end.reason)
        ? GONE_DRAIN_MS
        : this.opts.endDrainMs ?? END_DRAIN_MS;
      const delivered = await this.peer.drainChat(bound);
      const ms = Math.round(performance.now() - drainStart);
      this.log.add("worker", "last_messages", { delivered, ms });
    }
    await this.peer.close();
  }
}

/** What the receiver saw of the caller's packets, for the session record. */
function receiverCounts(receiver: CallerReceiver) {
  const t = receiver.stats;
  return {
    received: t.received,
    lost: t.lost,
    late: t.late,
    duplicates: t.duplicates,
    jitter_ms: Math.round(t.jitterMs * 10) / 10,
    depth: t.depth,
    unfilled: t.unfilled,
    recovered: t.recovered,
    concealed: t.concealed,
  };
}
