// The bot's voice toward a provider's stream: every 20 ms tick pulls the next 48 kHz frame from
// what plays, brings it to the line's rate (8 kHz, or 16 kHz for Plivo's L16) and codes it as the
// provider wants (μ-law, or 16-bit PCM), and sends it once a message's worth has gathered. Only while the bot speaks: when it goes
// quiet, the resampler's tail and a partly filled message are sent, then a mark, then nothing.
import type { FrameSource } from "../../audio/frame_source.ts";
import { BOT_FRAME, BotEdge, FrameResampler, LINE_FRAME } from "../edge_audio.ts";
import type { LineFormat, StreamDialect } from "./dialect.ts";

/** Frames of silence sent after the bot stops, so the resampler's tail ends its last sound. */
const TAIL_FRAMES = 2;

export class BotVoiceOut {
  source?: FrameSource;
  readonly #bytesPerFrame: number;
  readonly #message: Uint8Array;
  #frames = 0;
  #tail = 0;
  #marks = 0;
  #closed = false;
  readonly #mulaw?: BotEdge;
  readonly #pcm?: FrameResampler;
  readonly #zeros = new Int16Array(BOT_FRAME);

  constructor(
    private readonly dialect: StreamDialect,
    private readonly sendMedia: (payload: string, frames: number) => void,
    private readonly sendMark: (name: string) => void,
    private readonly format: LineFormat = { audio: dialect.audio, rate: 8000 },
  ) {
    const samples = format.rate / 50;
    this.#bytesPerFrame = format.audio === "mulaw" ? LINE_FRAME : samples * 2;
    this.#message = new Uint8Array(this.#bytesPerFrame * dialect.framesPerMessage);
    // μ-law is 8 kHz only (G.711); PCM is resampled straight from 48 kHz to the line's rate.
    if (format.audio === "mulaw") this.#mulaw = new BotEdge("PCMU");
    else this.#pcm = new FrameResampler(48000, format.rate, BOT_FRAME, samples);
  }

  /** One 20 ms tick of the frame clock. */
  tick(): void {
    if (this.#closed) return;
    const frame = this.source?.next();
    // Asking the source may end the call, which closes this mid-tick (as outbound.ts's stop).
    if (this.#closed) return;
    if (frame) {
      this.#tail = TAIL_FRAMES;
      this.#add(frame);
      return;
    }
    if (this.#tail > 0) {
      this.#tail--;
      this.#add(this.#zeros);
      if (this.#tail === 0) this.#finishTalkspurt();
    }
  }

  /** Barge-in: what is gathered but not sent is dropped (the provider's queue is cleared apart). */
  drop(): void {
    this.#frames = 0;
    this.#tail = 0;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#mulaw?.close();
    this.#pcm?.close();
  }

  #add(frame48k: Int16Array): void {
    const at = this.#frames * this.#bytesPerFrame;
    if (this.#mulaw) {
      this.#message.set(this.#mulaw.encode(frame48k), at);
    } else {
      const pcm = this.#pcm!.push(frame48k);
      const view = new DataView(this.#message.buffer, at, this.#bytesPerFrame);
      for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i], true);
    }
    if (++this.#frames === this.dialect.framesPerMessage) this.#flush();
  }

  /** The talkspurt's last message (topped up with silence to the provider's chunk) and a mark. */
  #finishTalkspurt(): void {
    if (this.#frames > 0) {
      const silence = this.format.audio === "mulaw" ? 0xff : 0;
      this.#message.fill(silence, this.#frames * this.#bytesPerFrame);
      this.#frames = this.dialect.framesPerMessage;
      this.#flush();
    }
    // Acknowledged once the provider has played the talkspurt (counted in the line's stats).
    this.sendMark(`bot-${++this.#marks}`);
  }

  #flush(): void {
    const bytes = this.#message.subarray(0, this.#frames * this.#bytesPerFrame);
    this.sendMedia(bytes.toBase64(), this.#frames);
    this.#frames = 0;
  }
}
