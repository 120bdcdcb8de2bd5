/// <reference lib="dom" />
// A microphone-only media manager for SmallWebRTCTransport.
//
// The transport's default manager is built on daily-js, which loads a script from Daily's CDN
// when it opens the microphone; a self-hosted page (and a test machine without internet) must
// not depend on that. This one opens the microphone with getUserMedia and nothing else.
// It mirrors the abstract MediaManager of @pipecat-ai/transport-lib, which the transport bundle
// does not export, so the interface is implemented here structurally.
import {
  DeviceError,
  type Participant,
  type PipecatClientOptions,
  type RTVIEventCallbacks,
  type Tracks,
} from "@pipecat-ai/client-js";

const localParticipant = (): Participant => ({ id: "local", name: "", local: true });

export class MicMediaManager {
  private callbacks: RTVIEventCallbacks = {};
  private options?: PipecatClientOptions;
  private micEnabled = true;
  private stream?: MediaStream;
  private micId?: string;

  // The transport adds its third (screen video) transceiver only when this is true; keeping it
  // keeps the offer's shape (audio, video, video + data) the same as with the default manager.
  get supportsScreenShare(): boolean {
    return true;
  }

  setUserAudioCallback(_cb: (data: ArrayBuffer) => void): void {
    // Raw PCM callbacks are for WebSocket transports; WebRTC carries the track itself.
  }

  setClientOptions(options: PipecatClientOptions, override = false): void {
    if (this.options && !override) return;
    this.options = options;
    // These are the client's wrapped callbacks: calling them also emits the client's events.
    this.callbacks = options.callbacks ?? {};
    this.micEnabled = options.enableMic ?? true;
  }

  async initialize(): Promise<void> {
    await this.openMic();
    this.callbacks.onAvailableMicsUpdated?.(await this.getAllMics());
  }

  async connect(): Promise<void> {
    // The transport stops the sender tracks when a call ends, so a second call needs a new one.
    if (!this.liveTrack()) await this.openMic();
  }

  disconnect(): Promise<void> {
    const track = this.liveTrack();
    this.stream?.getTracks().forEach((t) => t.stop());
    this.stream = undefined;
    if (track) this.callbacks.onTrackStopped?.(track, localParticipant());
    return Promise.resolve();
  }

  userStartedSpeaking(): Promise<unknown> {
    return Promise.resolve();
  }

  bufferBotAudio(_data: ArrayBuffer | Int16Array, _id?: string): Int16Array | undefined {
    return undefined; // bot audio arrives as a WebRTC track; the page plays it
  }

  async getAllMics(): Promise<MediaDeviceInfo[]> {
    return (await navigator.mediaDevices.enumerateDevices()).filter((d) => d.kind === "audioinput");
  }

  getAllCams(): Promise<MediaDeviceInfo[]> {
    return Promise.resolve([]);
  }

  async getAllSpeakers(): Promise<MediaDeviceInfo[]> {
    return (await navigator.mediaDevices.enumerateDevices()).filter((d) =>
      d.kind === "audiooutput"
    );
  }

  async updateMic(micId: string): Promise<void> {
    this.micId = micId || undefined;
    await this.disconnect();
    await this.openMic();
    const mic = this.selectedMic;
    if ("deviceId" in mic) this.callbacks.onMicUpdated?.(mic as MediaDeviceInfo);
  }

  updateCam(_camId: string): void {}

  updateSpeaker(_speakerId: string): void {}

  get selectedMic(): MediaDeviceInfo | Record<string, never> {
    const settings = this.liveTrack()?.getSettings();
    if (!settings?.deviceId) return {};
    return {
      deviceId: settings.deviceId,
      groupId: settings.groupId ?? "",
      kind: "audioinput",
      label: this.liveTrack()?.label ?? "",
      toJSON() {
        return this;
      },
    };
  }

  get selectedCam(): MediaDeviceInfo | Record<string, never> {
    return {};
  }

  get selectedSpeaker(): MediaDeviceInfo | Record<string, never> {
    return {};
  }

  enableMic(enable: boolean): void {
    this.micEnabled = enable;
    const track = this.liveTrack();
    if (track) track.enabled = enable;
  }

  enableCam(_enable: boolean): void {}

  enableScreenShare(_enable: boolean): void {}

  get isCamEnabled(): boolean {
    return false;
  }

  get isMicEnabled(): boolean {
    return this.micEnabled;
  }

  get isSharingScreen(): boolean {
    return false;
  }

  tracks(): Tracks {
    const audio = this.liveTrack();
    return { local: audio ? { audio } : {} };
  }

  private liveTrack(): MediaStreamTrack | undefined {
    const track = this.stream?.getAudioTracks()[0];
    return track?.readyState === "live" ? track : undefined;
  }

  private async openMic(): Promise<void> {
    if (this.liveTrack()) return;
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: this.micId ? { deviceId: { exact: this.micId } } : true,
      });
    } catch (err) {
      // Reported through the client's device-error callback; the call then goes on without a
      // microphone, as it does with the default manager.
      const name = (err as Error)?.name;
      const type = name === "NotAllowedError"
        ? "permissions"
        : name === "NotFoundError"
        ? "not-found"
        : name === "NotReadableError"
        ? "in-use"
        : "unknown";
      this.callbacks.onDeviceError?.(
        new DeviceError(["mic"], type, String(err), { sourceError: err as Error }),
      );
      return;
    }
    const track = this.stream.getAudioTracks()[0];
    track.enabled = this.micEnabled;
    this.callbacks.onTrackStarted?.(track, localParticipant());
  }
}
