// One call on this worker: the peer, RTVI on its chat channel, outbound audio, what plays (a
// conversation with the brain, or the echo diagnostic), liveness and the session's status.
import type { Pool } from "../../db/client.ts";
import { activateSession, recordingOf } from "./call_open.ts";
import { logger } from "../../common/log.ts";
import type { EndOfTurnMode } from "../turn/turn_taking.ts";
import { OpusDecoder } from "../../wasm/opus.ts";
import type { PeerState, WorkerPeer } from "../rtc/peer.ts";
import { CallerReceiver } from "../rtc/receiver.ts";
import { RtviSession } from "../rtvi/session.ts";
import { callEnded, signalling } from "../rtvi/protocol.ts";
import { applyConfig, defaultConfig } from "./call_config.ts";
import { noiseSuppressionOf } from "../../common/noise_suppression.ts";
import { Conversation } from "./conversation.ts";
import { EchoSource } from "./echo.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import { chatLogData } from "./chat_log.ts";
import type { CallRecording } from "./recording.ts";
import { OutboundAudio } from "./outbound.ts";
import { closeCall, type EndStatus } from "./call_close.ts";
import { SessionLog } from "./session_log.ts";
import type { TurnObserver } from "./turn_record.ts";

const log = logger("call");

export interface CallOptions {
  sessionId: string;
  tokenId: string;
  agentId: string;
  brainUrl: string;
  /** The normalized agent input signed into the token (init, config, record, labels). */
  input?: { init?: unknown; config?: unknown } | null;
  /** The speech engines; absent on a worker that only serves the echo diagnostic. */
  engines?: CallEngines;
  /** Folder recordings are written to. */
  recordingsDir?: string;
  sql: Pool;
  /**
   * Hang-up (`no_ping`) when nothing came from the page for this long: no chat frame (pings
   * included) and no audio packet. A page whose pings stop but whose microphone still sends is
   * alive; a caller whose network is gone sends neither.
   */
  livenessMs?: number;
  /** Fail when the peer is not connected this long after the offer. */
  connectTimeoutMs?: number;
  /** How the caller's turns end: the worker's END_OF_TURN (default adaptive). */
  endOfTurn?: EndOfTurnMode;
  onEnded?: (call: Call) => void;
  /** Longest wait for the page to acknowledge the call's last messages (END_DRAIN_MS). */
  endDrainMs?: number;
}

export type { EndStatus };

/**
 * Longest wait at a call's end for the page to acknowledge its last messages. SCTP retransmits a
 * lost chunk after its RTO (at least 1 s, doubling): 5 s is three tries, enough at 20 % loss.
 */
export const END_DRAIN_MS = 5000;

/** A frame that never came: the conversation's decoder conceals an empty packet. */

/** The wait for acknowledgements after an end reason that suggests the page is gone. */
const GONE_DRAIN_MS = 300;

/** End reasons after which the page is probably gone: its last messages get a short wait. */
const PAGE_GONE = new Set(["no_ping", "ice_failed", "hangup", "connect_timeout"]);

export class Call {
  readonly sessionId: string;
  readonly tokenId: string;
  readonly log: SessionLog;
  readonly outbound: OutboundAudio;
  readonly rtvi: RtviSession;
  peer: WorkerPeer;
  endStatus?: EndStatus;
  endReason?: string;
  /** Told each turn's latencies and barge-ins as they happen (the node's metrics set it). */
  turnObserver?: TurnObserver;
  /**
   * Resolves when the call has ended and a first attempt at its record was made (it is written
   * then unless the database is away; endRecords retries it in the background).
   */
  readonly ended: Promise<void>;

  private opts: CallOptions;
  private detach: (() => void)[] = [];
  private timers: ReturnType<typeof setTimeout>[] = [];
  private chatOpened = false;
  /** performance.now() of the caller's last audio packet (liveness, with RTVI's last frame). */
  private lastAudioAt = performance.now();
  private dtlsUp = false;
  private finished = false;
  private resolveEnded!: () => void;
  private echo?: EchoSource;
  /** The echo's decoder, made only if the caller's packets are not 20 ms (echo.ts). */
  private decoder?: OpusDecoder;
  conversation?: Conversation;
  private recording?: CallRecording;
  /** The caller's packets back in order and decoded, one frame per 20 ms (rtc/receiver.ts). */
  private receiver = this.newReceiver();

  constructor(peer: WorkerPeer, opts: CallOptions) {
    this.opts = opts;
    this.sessionId = opts.sessionId;
    this.tokenId = opts.tokenId;
    this.peer = peer;
    this.ended = new Promise((r) => (this.resolveEnded = r));
    this.log = new SessionLog(opts.sql, opts.sessionId);
    this.outbound = new OutboundAudio(() => this.peer.audio);
    this.rtvi = new RtviSession((text) => this.sendChat(text), {
      onClientReady: (about) => this.start(about),
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
      onDisconnectBot: () => this.end("ended", "disconnect_bot"),
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
      if (!this.dtlsUp) this.end("failed", "connect_timeout");
    }, opts.connectTimeoutMs ?? 20_000));
    const liveness = opts.livenessMs ?? 3000;
    this.timers.push(setInterval(() => {
      const heardAt = Math.max(this.rtvi.lastHeardAt, this.lastAudioAt);
      if (this.chatOpened && performance.now() - heardAt > liveness) {
        this.end("ended", "no_ping");
      }
    }, 250));
  }

  /** `restart_pc`: the page built a new peer connection; the call and its RTVI state go on. */
  async replacePeer(peer: WorkerPeer): Promise<void> {
    const old = this.peer;
    for (const off of this.detach.splice(0)) off();
    this.peer = peer;
    this.rtvi.lastHeardAt = this.lastAudioAt = performance.now();
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
        this.rtvi.lastHeardAt = performance.now();
        // An open data channel runs over DTLS: the transport is up, whatever werift's
        // connectionState says (it can miss "connected" when SCTP came up first, under loss).
        this.transportUp("chat_open");
      }),
      peer.onChatMessage.on((text) => this.rtvi.receive(text)),
      peer.onChatClose.on(() => this.end("ended", "hangup")),
      peer.onAudioRtp.on((packet) => {
        this.lastAudioAt = performance.now();
        if (!this.conversation) return this.onEchoAudio(packet.payload);
        this.receiver.push(packet, this.lastAudioAt);
      }),
    );
  }

  /** DTLS is up (the peer said so, or the data channel opened over it): audio starts. */
  private transportUp(by: "connected" | "chat_open"): void {
    if (this.dtlsUp || this.finished) return;
    this.dtlsUp = true;
    this.log.add("worker", "dtls_connected", { by });
    this.outbound.start();
  }

  private onPeerState(state: PeerState): void {
    if (state === "connected") {
      this.transportUp("connected");
    } else if (state === "failed") {
      this.end("failed", "ice_failed");
    } else if (state === "closed") {
      this.end("ended", "hangup");
    }
  }

  private sendChat(text: string): void {
    this.log.add("to_page", "chat", text);
    this.peer.sendChat(text);
  }

  /** client-ready: the call starts. */
  private async start(about: unknown): Promise<void> {
    this.log.add("worker", "call_started", { about });
    const active = await activateSession(this.opts.sql, this.sessionId, log);
    if (this.finished) return;
    log.info("call started", { session_id: this.sessionId, brain: this.opts.brainUrl });
    if (this.opts.brainUrl === "echo:") {
      this.echo = new EchoSource();
      this.outbound.source = this.echo;
      return;
    }
    if (!this.opts.engines) return this.end("failed", "engine_unavailable");
    this.recording = recordingOf(active, this.sessionId, this.opts.recordingsDir);
    if (this.recording) this.outbound.tap = (pcm) => this.recording?.tick(pcm);
    const config = applyConfig(defaultConfig(), this.opts.input?.config as never);
    this.conversation = new Conversation({
      sessionId: this.sessionId,
      agentId: this.opts.agentId,
      brainUrl: this.opts.brainUrl,
      init: this.opts.input?.init ?? null,
      config,
      engines: this.opts.engines,
      log: this.log,
      rtvi: this.rtvi,
      recording: this.recording,
      endCall: (status, reason) => this.end(status, reason),
      endOfTurn: this.opts.endOfTurn,
      noiseSuppression: noiseSuppressionOf(this.opts.input?.config),
    });
    this.conversation.turnLog.observer = {
      latency: (step, ms) => this.turnObserver?.latency(step, ms),
      interrupted: () => this.turnObserver?.interrupted(),
    };
    this.outbound.source = this.conversation.speaker;
    await this.conversation.start();
  }

  private newReceiver(): CallerReceiver {
    return new CallerReceiver((pcm) => this.conversation?.onCallerFrame(pcm));
  }

  /** The echo diagnostic plays packets as they arrive, as it always has. */
  private onEchoAudio(payload: Uint8Array): void {
    if (!this.echo || this.echo.pushPacket(payload)) return;
    this.decoder ??= new OpusDecoder({ sampleRate: 48000 });
    try {
      this.echo.pushDecoded(this.decoder.decode(payload));
    } catch {
      // A corrupt packet is dropped; the next one decodes.
    }
  }

  /** Ends the call once: stops audio, tells the page, closes the peer, writes the record. */
  async end(status: EndStatus, reason: string): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const endedAt = performance.now();
    this.endStatus = status;
    this.endReason = reason;
    for (const t of this.timers) clearTimeout(t);
    this.outbound.stop();
    this.decoder?.close();
    if (this.peer.chatOpen) {
      // Why, for the page (it would otherwise only see the connection close), then goodbye.
      this.rtvi.emit("server-message", callEnded(status, reason));
      this.peer.sendChat(signalling("peerLeft"));
    }
    for (const off of this.detach.splice(0)) off();
    if (this.conversation) {
      this.receiver.flush();
      const t = this.receiver.stats;
      this.log.add("worker", "caller_audio", {
        received: t.received,
        lost: t.lost,
        late: t.late,
        duplicates: t.duplicates,
        jitter_ms: Math.round(t.jitterMs * 10) / 10,
        depth: t.depth,
        unfilled: t.unfilled,
        recovered: t.recovered,
        concealed: t.concealed,
      });
    }
    this.receiver.close();
    if (this.peer.chatOpen) {
      // The last messages are retransmitted until the page acknowledges them (bounded); briefly
      // when the page is probably gone (a live one acknowledges within a round trip).
      const drainStart = performance.now();
      const bound = PAGE_GONE.has(reason) ? GONE_DRAIN_MS : this.opts.endDrainMs ?? END_DRAIN_MS;
      const delivered = await this.peer.drainChat(bound);
      const ms = Math.round(performance.now() - drainStart);
      this.log.add("worker", "last_messages", { delivered, ms });
    }
    await this.peer.close();
    await closeCall(
      {
        sessionId: this.sessionId,
        sql: this.opts.sql,
        log: this.log,
        conversation: this.conversation,
        recording: this.recording,
      },
      { status, reason, endedAt },
      { log, leaveNode: () => this.opts.onEnded?.(this) },
    );
    log.info("call ended", { session_id: this.sessionId, status, reason });
    this.resolveEnded();
  }
}
