/**
 * The caller's audio as the call should hear it: RTP packets in, in whatever order and number the
 * network delivers them; out, one decoded 16 kHz frame per 20 ms of the caller's time. The
 * jitter buffer (jitter_buffer.ts) puts packets in order and marks what never came; each lost
 * frame is rebuilt from the next packet's Opus in-band FEC when that packet is there, and
 * concealed by libopus otherwise, so the VAD's clock, recognition and the recording keep the
 * caller's timeline.
 */
import { OpusDecoder } from "../../wasm/opus.ts";
import { JitterBuffer, type JitterStats, type Slot } from "./jitter_buffer.ts";

/** What the receiver reads of an RTP packet (werift's RtpPacket has these). */
export interface CallerPacket {
  header: { ssrc: number; sequenceNumber: number; timestamp: number };
  payload: Uint8Array;
}

export interface ReceiverStats extends JitterStats {
  /** Lost frames decoded from the next packet's FEC (libopus conceals if it carries none). */
  recovered: number;
  /** Lost frames concealed (no next packet in time, or a corrupt packet). */
  concealed: number;
}

export class CallerReceiver {
  #buffer = new JitterBuffer();
  #decoder = new OpusDecoder({ sampleRate: 16000 });
  #ssrc: number | undefined;
  #recovered = 0;
  #concealed = 0;
  /** Counts of the streams before the current one (the caller's SSRC changed). */
  #past = { received: 0, lost: 0, late: 0, duplicates: 0, restarts: 0 };

  /** `onFrame` gets each 20 ms frame (320 samples, a reused buffer: copy what you keep). */
  constructor(private onFrame: (pcm: Int16Array) => void) {}

  push(packet: CallerPacket, arrivalMs = performance.now()): void {
    const { ssrc, sequenceNumber, timestamp } = packet.header;
    if (this.#ssrc !== undefined && ssrc !== this.#ssrc) {
      // A new stream from the caller (a new peer connection): its numbers start elsewhere.
      this.flush();
      const { received, lost, late, duplicates, restarts } = this.#buffer.stats;
      const p = this.#past;
      this.#past = {
        received: p.received + received,
        lost: p.lost + lost,
        late: p.late + late,
        duplicates: p.duplicates + duplicates,
        restarts: p.restarts + restarts + 1,
      };
      this.#buffer = new JitterBuffer();
    }
    this.#ssrc = ssrc;
    this.#play(this.#buffer.push(sequenceNumber, timestamp, packet.payload, arrivalMs));
  }

  /** Plays out every frame still held (the call ends). */
  flush(): void {
    this.#play(this.#buffer.flush());
  }

  get stats(): ReceiverStats {
    const now = this.#buffer.stats;
    const p = this.#past;
    return {
      ...now,
      received: p.received + now.received,
      lost: p.lost + now.lost,
      late: p.late + now.late,
      duplicates: p.duplicates + now.duplicates,
      restarts: p.restarts + now.restarts,
      recovered: this.#recovered,
      concealed: this.#concealed,
    };
  }

  close(): void {
    this.#decoder.close();
  }

  #play(slots: Slot[]): void {
    for (const slot of slots) this.onFrame(this.#decode(slot));
  }

  #decode(slot: Slot): Int16Array {
    try {
      if (slot.payload) return this.#decoder.decode(slot.payload);
      if (slot.next) {
        const pcm = this.#decoder.recover(slot.next);
        this.#recovered++;
        return pcm;
      }
    } catch {
      // A corrupt packet: its 20 ms are concealed like a lost one.
    }
    this.#concealed++;
    return this.#decoder.conceal();
  }
}
