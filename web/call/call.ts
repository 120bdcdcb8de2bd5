/// <reference lib="dom" />
// One voice call from a page, following the spec's browser-side steps: the page calls
// sessions.connect itself with a publishable key, then hands the response body to the Pipecat
// client's connect() with the offer headers turned into a real Headers instance.
import { type BotOutputData, PipecatClient, type TranscriptData } from "@pipecat-ai/client-js";
import { SmallWebRTCTransport } from "@pipecat-ai/small-webrtc-transport";
import { MicMediaManager } from "./media_manager.ts";
import { CLIENT_LATENCY_T, readCallEnded } from "../../proto/rtvi.ts";

export interface CallConfig {
  /** Base URL of the API, e.g. "https://api.example.com" (no trailing slash needed). */
  apiUrl: string;
  /** A pk_ key whose allowlist holds this page's origin. */
  publishableKey: string;
  agentId: string;
  /** Extra sessions.connect fields (init, config, record, labels). */
  connectBody?: Record<string, unknown>;
}

export type CallPhase =
  | "idle"
  | "requesting" // sessions.connect in flight
  | "refused" // sessions.connect answered non-2xx; no WebRTC was attempted
  | "connecting" // client.connect() in flight
  | "ready" // bot-ready arrived: connect() resolved
  | "ended"
  | "failed";

/**
 * How the call ended: the worker's `call-ended` notice (its session status and reason), the
 * page's own hang-up (`ended`/`hangup`), or `disconnected` when the connection closed with no
 * notice (the network, or a worker that died).
 */
export interface CallEnd {
  status: string;
  reason: string;
}

/** Plain, serialisable state of the call; pages render it and tests read it. */
export interface CallState {
  phase: CallPhase;
  sessionId?: string;
  /** The sessions.connect refusal, when there was one (the service's error envelope). */
  refusal?: {
    status: number;
    code?: string;
    message?: string;
    details?: Record<string, unknown>;
  };
  /** sessions.connect could not be sent at all: why. */
  unreachable?: string;
  /** True once client.connect() has been called. */
  connectAttempted: boolean;
  /** The transport reached "connected" (data channel open). */
  connected: boolean;
  botReady: boolean;
  botReadyData?: unknown;
  botAudioStarted: boolean;
  micStarted: boolean;
  error?: string;
  /** Set once the call is over (see CallEnd). */
  end?: CallEnd;
  /** Short human-readable log of what happened, oldest first. */
  log: string[];
}

export interface CallHooks {
  onChange?(state: CallState): void;
  onBotAudio?(track: MediaStreamTrack): void;
  onMicAudio?(track: MediaStreamTrack): void;
  onUserTranscript?(data: TranscriptData): void;
  onBotOutput?(data: BotOutputData): void;
  onSpeaking?(who: "user" | "bot", speaking: boolean): void;
  /** RTVI server-message data as is; the service sends brain actions as `{type, data}`. */
  onServerMessage?(data: unknown): void;
}

const CONNECT_PATH = "/api/v1/sessions.connect";

export class VoiceCall {
  readonly state: CallState = {
    phase: "idle",
    connectAttempted: false,
    connected: false,
    botReady: false,
    botAudioStarted: false,
    micStarted: false,
    log: [],
  };
  client?: PipecatClient;

  constructor(
    private config: CallConfig,
    private audio: HTMLAudioElement,
    private hooks: CallHooks = {},
  ) {}

  async start(): Promise<void> {
    this.update({ phase: "requesting" }, "sessions.connect");
    let res: Response;
    try {
      res = await fetch(this.config.apiUrl.replace(/\/$/, "") + CONNECT_PATH, {
        method: "POST",
        headers: {
          "Authorization": `Bearer ${this.config.publishableKey}`,
          "Content-Type": "application/json",
        },
        body: JSON.stringify({ agent_id: this.config.agentId, ...this.config.connectBody }),
      });
    } catch (err) {
      this.update(
        { phase: "failed", error: String(err), unreachable: String(err) },
        `sessions.connect failed: ${err}`,
      );
      return;
    }
    const body = await res.json().catch(() => null);
    if (!res.ok) {
      const details = body?.error?.details;
      const refusal = {
        status: res.status,
        code: body?.error?.code,
        message: body?.error?.message,
        ...(details && typeof details === "object" ? { details } : {}),
      };
      this.update(
        { phase: "refused", refusal },
        `refused: ${res.status} ${refusal.code ?? ""} ${refusal.message ?? ""}`.trimEnd(),
      );
      return;
    }

    // The body goes to connect() as is (the transport lower-camels the outer keys itself);
    // only the headers must become a Headers instance, or the offer request throws.
    const params = {
      ...body,
      webrtc_request_params: {
        ...body.webrtc_request_params,
        headers: new Headers(body.webrtc_request_params.headers),
      },
    };
    this.client = this.makeClient();
    this.update(
      { phase: "connecting", sessionId: body.session_id, connectAttempted: true },
      `connecting session ${body.session_id}`,
    );
    try {
      const data = await this.client.connect(params);
      this.update({ phase: "ready", botReady: true, botReadyData: data }, "bot ready");
    } catch (err) {
      this.update({ phase: "failed", error: String(err) }, `connect failed: ${err}`);
    }
  }

  /** An RTVI client-message `{t, d}` to the brain; only once the call is ready. */
  sendClientMessage(t: string, d?: unknown): void {
    if (!this.client || this.state.phase !== "ready") throw new Error("the call is not ready");
    this.client.sendClientMessage(t, d);
    this.update({}, `sent client message ${t}`);
  }

  /**
   * A typed turn: the Pipecat client's own sendText, an RTVI send-text `{content, options: {}}`.
   * The worker makes it a caller turn (the brain gets it marked typed; a reply playing is cut)
   * and echoes it back as a final user-transcription, so the transcript shows it in its place.
   */
  async sendText(content: string): Promise<void> {
    if (!this.client || this.state.phase !== "ready") throw new Error("the call is not ready");
    await this.client.sendText(content);
    this.update({}, "sent typed text");
  }

  /**
   * Tells the worker the page's own end-of-speech-to-first-audio figure (a client-message with
   * the reserved t "client-latency", which the worker keeps on the turn and never forwards to
   * the brain). Resolves with whether the worker kept it; undefined when it could not be sent.
   */
  async reportLatency(ms: number): Promise<boolean | undefined> {
    if (!this.client || this.state.phase !== "ready") return undefined;
    try {
      const d = await this.client.sendClientRequest(
        CLIENT_LATENCY_T,
        { end_of_speech_to_audio_ms: Math.round(ms * 10) / 10 },
        5000,
      );
      return (d as { recorded?: unknown } | null)?.recorded === true;
    } catch {
      return undefined; // refused, timed out or the call ended: the page still shows it
    }
  }

  async hangUp(): Promise<void> {
    const end = this.state.end ?? { status: "ended", reason: "hangup" };
    await this.client?.disconnect();
    this.update({ phase: "ended", end }, "hung up");
  }

  private makeClient(): PipecatClient {
    return new PipecatClient({
      transport: new SmallWebRTCTransport({ mediaManager: new MicMediaManager() }),
      enableMic: true,
      enableCam: false,
      callbacks: {
        onConnected: () => this.update({ connected: true }, "transport connected"),
        onDisconnected: () => {
          const ended = this.state.phase === "ready" || this.state.phase === "connecting";
          const end = this.state.end ?? { status: "disconnected", reason: "" };
          this.update(
            { connected: false, ...(ended ? { phase: "ended", end } : {}) },
            "disconnected",
          );
        },
        onTrackStarted: (track, participant) => {
          if (track.kind !== "audio") return;
          if (participant?.local) {
            this.update({ micStarted: true }, "microphone on");
            this.hooks.onMicAudio?.(track);
            return;
          }
          // The transport reports the bot's track without a participant, once RTP flows.
          this.audio.srcObject = new MediaStream([track]);
          this.audio.play().catch((err) => this.update({}, `audio play failed: ${err}`));
          this.update({ botAudioStarted: true }, "bot audio started");
          this.hooks.onBotAudio?.(track);
        },
        onUserTranscript: (d) => this.hooks.onUserTranscript?.(d),
        onBotOutput: (d) => this.hooks.onBotOutput?.(d),
        onUserStartedSpeaking: () => this.hooks.onSpeaking?.("user", true),
        onUserStoppedSpeaking: () => this.hooks.onSpeaking?.("user", false),
        onBotStartedSpeaking: () => this.hooks.onSpeaking?.("bot", true),
        onBotStoppedSpeaking: () => this.hooks.onSpeaking?.("bot", false),
        onServerMessage: (d) => {
          // The worker's last word: why it ended the call (not a brain action).
          const end = readCallEnded(d);
          if (!end) return this.hooks.onServerMessage?.(d);
          const phase = end.status === "failed" ? "failed" : "ended";
          this.update({ phase, end }, `call ${end.status}: ${end.reason}`);
        },
        onError: (msg) => this.update({ error: JSON.stringify(msg.data) }, "error from bot"),
      },
    });
  }

  private update(patch: Partial<CallState>, note?: string): void {
    Object.assign(this.state, patch);
    if (note) this.state.log.push(note);
    this.hooks.onChange?.(this.state);
  }
}
