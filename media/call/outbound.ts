// Outbound audio for one call: from the moment DTLS is up, every 20 ms on the pacer's grid, one
// Opus packet goes out — the next frame of whatever is speaking (encoded here, or already a
// packet, as the echo's are), or pre-encoded silence.
import { OPUS_SILENCE_20MS, OpusEncoder } from "../../wasm/opus.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import { sharedFrameClock } from "../audio/frame_clock.ts";
import { type LatenessHistogram, Pacer, type PacerOptions } from "../audio/pacer.ts";
import type { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { ExpectedLoss } from "./loss_adaptation.ts";

/** Frames between reads of the caller's loss reports (RTCP RRs come about once a second). */
const LOSS_READ_FRAMES = 50;

/**
 * libopus complexity of the bot's voice. The default (9) costs ~0.4 ms per 20 ms speech frame
 * here, about 2 % of a core per speaking call; 5 halves that for speech that measures the same
 * (waveform SNR 10.55 vs 10.64 dB on the bench sentence) and is what WebRTC uses on mobile.
 */
export const OUTBOUND_OPUS_COMPLEXITY = 5;

export class OutboundAudio {
  /** Made at the first PCM frame: a call whose source only gives packets never needs one. */
  private encoder?: OpusEncoder;
  private pacer: Pacer;
  source?: FrameSource;
  /** Sees every outbound frame (undefined = silence), e.g. for the recording; must not keep it. */
  tap?: (pcm: Int16Array | undefined) => void;
  /** Frames that carried audio (not silence). */
  voiced = 0;
  /** Once stopped, for good: nothing is encoded or sent again (the encoder is closed). */
  private stopped = false;
  /** The encoder's FEC follows the loss the caller reports (loss_adaptation.ts). */
  readonly expectedLoss = new ExpectedLoss();

  constructor(private sender: () => OpusRtpSender, pacerOptions: PacerOptions = {}) {
    // Every call of the worker on one clock: one timer wake per frame for all of them.
    this.pacer = new Pacer((t) => this.tick(t.frame), {
      clock: sharedFrameClock(),
      ...pacerOptions,
    });
  }

  get stats() {
    return this.pacer.stats();
  }

  /** The pacer's live counts, without computing quantiles (the node's metrics read them). */
  get pacing(): { skipped: number; histogram?: LatenessHistogram } {
    return { skipped: this.pacer.skipped, histogram: this.pacer.histogram };
  }

  start(): void {
    if (!this.stopped) this.pacer.start();
  }

  private lastFrame = -1;

  private tick(frame: number): void {
    const rtp = this.sender();
    // Frames the pacer skipped after a stall still advance the RTP clock, and the tap sees them
    // as the silence they were, so a recording keeps the call's length (bench/media/network.ts).
    if (this.lastFrame >= 0 && frame > this.lastFrame + 1) {
      const missed = frame - this.lastFrame - 1;
      rtp.skip(missed);
      for (let i = 0; i < missed; i++) this.tap?.(undefined);
    }
    this.lastFrame = frame;
    if (frame % LOSS_READ_FRAMES === 0) this.readLoss(rtp);
    // A source's own packets go out as they are, unless a tap must see the PCM. send() copies
    // the bytes (werift keeps payloads in its NACK history), so the source may reuse its buffer.
    const packet = this.tap ? undefined : this.source?.nextPacket?.();
    // Asking the source may end the call, which stops this outbound mid-tick (the speaker's last
    // frame completes its unit; a brain that asked to end is then told the bot is quiet).
    if (this.stopped) return;
    if (packet) {
      this.voiced++;
      rtp.send(packet);
      return;
    }
    const pcm = this.source?.next();
    if (this.stopped) return;
    this.tap?.(pcm);
    // Silence is sent as packets too (no DTX gaps), so no talkspurt marker is needed. It is one
    // constant packet, never encoded, and the sender need not copy it.
    if (pcm) {
      this.voiced++;
      this.encoder ??= this.newEncoder();
      rtp.send(this.encoder.encode(pcm));
    } else {
      rtp.sendConstant(OPUS_SILENCE_20MS);
    }
  }

  private newEncoder(): OpusEncoder {
    const encoder = new OpusEncoder({ complexity: OUTBOUND_OPUS_COMPLEXITY });
    if (this.expectedLoss.percent > 0) encoder.setExpectedLoss(this.expectedLoss.percent);
    return encoder;
  }

  private readLoss(rtp: OpusRtpSender): void {
    const reported = rtp.reportedLoss;
    if (reported === undefined) return;
    const percent = this.expectedLoss.report(reported);
    if (percent !== undefined) this.encoder?.setExpectedLoss(percent);
  }

  /** Stops for good, also from inside a tick (the source's next() may end the call). */
  stop(): void {
    this.stopped = true;
    this.pacer.stop();
    this.encoder?.close();
  }
}
