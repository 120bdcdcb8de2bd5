/**
 * The caller's side of a SIP phone line: RTP packets in, in whatever order and number the network
 * delivers them; out, one 16 kHz frame of 320 samples per 20 ms of the caller's time, and one
 * DtmfDigit per key press.
 *
 * Order: media/rtc/jitter_buffer.ts (the web calls' one) puts packets back in sequence order and
 * drops duplicates and packets too late for their place, with a depth that grows from the
 * measured jitter and from late packets. It counts time in 48 kHz ticks, so 8 kHz timestamps go
 * in multiplied by 6 (mod 2^32, which keeps their differences). Telephone-event and comfort-noise
 * packets go through it too: they take sequence numbers, and a lost audio packet is told from an
 * event by the sequence alone.
 *
 * Time: the timeline follows the audio packets' RTP timestamps, not packet counts, so any ptime
 * (10, 20, 30 ms) works and whatever the timestamps skip is filled: a gap after lost packets is
 * concealed, one that covered a key press (telephone events) or comfort noise (payload 13) is
 * silence. Fill is bounded by the time packets have been arriving for (plus a second), so a
 * caller jumping its timestamps cannot make the worker produce minutes of audio at once.
 *
 * Concealment is repeat-and-fade: the last 20 ms heard, repeated, fading linearly to silence over
 * 60 ms, then silence. G.711 has no redundancy to rebuild from; the pitch-period repetition of
 * G.711 Appendix I sounds better on long gaps, but on a trunk's rare single losses a fade keeps
 * the VAD and recognition from hearing a click or a hole, which is what the pipeline needs.
 */
import { JitterBuffer, type Slot } from "../rtc/jitter_buffer.ts";
import { CallerEdge, LINE_FRAME } from "./edge_audio.ts";
import type { G711Law } from "./g711.ts";
import type { DtmfDigit } from "./line.ts";
import { parseRtp, type RtpPacket } from "./rtp_packet.ts";
import { redundantBlocks, TelephoneEvents } from "./telephone_event.ts";

/** RFC 3551's comfort noise (RFC 3389) payload type. */
export const COMFORT_NOISE_PT = 13;
/** Concealment fades to silence over this many samples (60 ms at 8 kHz). */
const FADE_SAMPLES = 480;
/** How far (in samples) the timeline may run ahead of the arrival clock: one second. */
const AHEAD_SLACK = 8000;
/** A timestamp jump beyond this (60 s) is a new timeline, not a gap to fill. */
const MAX_FILL = 60 * 8000;

export interface CallerTimelineOptions {
  law: G711Law;
  /** The answer's codec payload type (0 or 8, or the offer's dynamic one). */
  payloadType: number;
  /** The answer's telephone-event payload type, when DTMF was negotiated. */
  dtmfPayloadType?: number;
  /** The answer's red/8000 over telephone-event (RFC 2198), when negotiated. */
  redPayloadType?: number;
  /** Each 16 kHz frame (a reused buffer: copy what you keep). */
  onFrame: (pcm16k: Int16Array) => void;
  onDigit: (digit: DtmfDigit) => void;
}

export interface CallerTimelineStats {
  /** Audio, event and comfort-noise packets taken in order (duplicates and late ones not). */
  received: number;
  lost: number;
  late: number;
  duplicates: number;
  /** Packets of a payload type the answer did not name: dropped. */
  unknownPayload: number;
  /** 16 kHz frames given to the pipeline. */
  frames: number;
  /** Samples (8 kHz) concealed after lost audio, and filled with silence (events, comfort noise). */
  concealedSamples: number;
  silenceSamples: number;
  /** Samples a timestamp jump asked for that were not filled (ahead of the arrival clock). */
  unfilledSamples: number;
  /** The caller's stream began again: a new SSRC, or a timestamp jump too big to fill. */
  restarts: number;
  jitterMs: number;
  depth: number;
}

export class CallerTimeline {
  readonly #edge: CallerEdge;
  readonly #events: TelephoneEvents;
  #buffer = new JitterBuffer();
  #ssrc: number | undefined;
  /** RTP timestamp just after the last audio sample taken; undefined until the first. */
  #end: number | undefined;
  /** The last 20 ms heard (8 kHz), what concealment repeats. */
  readonly #last = new Int16Array(LINE_FRAME);
  readonly #scratch = new Int16Array(LINE_FRAME);
  /** Samples concealed since the last real audio (how far the fade has gone). */
  #fadeAt = 0;
  /** Since the last audio packet: an event or comfort noise came, so a gap is silence. */
  #quietGap = false;
  #firstArrival: number | undefined;
  #lastArrival = 0;
  #samples = 0;
  /** Counts of the jitter buffers of earlier SSRCs. */
  #past = { received: 0, lost: 0, late: 0, duplicates: 0 };
  readonly #stats = {
    unknownPayload: 0,
    frames: 0,
    concealedSamples: 0,
    silenceSamples: 0,
    unfilledSamples: 0,
    restarts: 0,
  };

  constructor(private options: CallerTimelineOptions) {
    this.#edge = new CallerEdge(options.law, (pcm) => {
      this.#stats.frames++;
      options.onFrame(pcm);
    });
    this.#events = new TelephoneEvents(options.onDigit);
  }

  get dtmf() {
    return this.#events.stats;
  }

  /** Takes one packet (parsed from `datagram`, which is kept until it is played). */
  push(packet: RtpPacket, datagram: Uint8Array, arrivalMs: number): void {
    const pt = packet.payloadType;
    const o = this.options;
    let clockTs = packet.timestamp;
    if (pt === o.dtmfPayloadType && packet.payload.length >= 4) {
      // An event's packets all carry its start; its start plus duration follows the clock.
      clockTs = (packet.timestamp + ((packet.payload[2] << 8) | packet.payload[3])) >>> 0;
    } else if (pt === o.redPayloadType && o.redPayloadType !== undefined) {
      // The primary (last) block's start plus duration follows the clock.
      const last = redundantBlocks(packet.timestamp, packet.payload).at(-1);
      if (last && last.payload.length >= 4) {
        clockTs = (last.timestamp + ((last.payload[2] << 8) | last.payload[3])) >>> 0;
      }
    } else if (pt !== o.payloadType && pt !== o.dtmfPayloadType && pt !== COMFORT_NOISE_PT) {
      this.#stats.unknownPayload++;
      return;
    }
    if (this.#ssrc !== undefined && packet.ssrc !== this.#ssrc) this.#newStream();
    this.#ssrc = packet.ssrc;
    this.#firstArrival ??= arrivalMs;
    this.#lastArrival = Math.max(this.#lastArrival, arrivalMs);
    const ticks48k = Math.imul(clockTs, 6) >>> 0;
    this.#play(this.#buffer.push(packet.sequenceNumber, ticks48k, datagram, arrivalMs));
  }

  /** Plays out whatever the jitter buffer still holds (the call ends, or the stream changes). */
  flush(): void {
    this.#play(this.#buffer.flush());
  }

  stats(): CallerTimelineStats {
    const b = this.#buffer.stats, p = this.#past;
    return {
      received: p.received + b.received,
      lost: p.lost + b.lost,
      late: p.late + b.late,
      duplicates: p.duplicates + b.duplicates,
      ...this.#stats,
      jitterMs: b.jitterMs,
      depth: b.depth,
    };
  }

  close(): void {
    this.#edge.close();
  }

  #newStream(): void {
    this.flush();
    const b = this.#buffer.stats, p = this.#past;
    this.#past = {
      received: p.received + b.received,
      lost: p.lost + b.lost,
      late: p.late + b.late,
      duplicates: p.duplicates + b.duplicates,
    };
    this.#buffer = new JitterBuffer();
    this.#end = undefined;
    this.#stats.restarts++;
  }

  #play(slots: Slot[]): void {
    for (const slot of slots) {
      // Lost packets need no slot of their own: the next audio's timestamp shows the gap.
      if (!slot.payload) continue;
      const packet = parseRtp(slot.payload) as RtpPacket;
      if (packet.payloadType === this.options.payloadType) {
        this.#audio(packet.timestamp, packet.payload);
      } else {
        this.#quietGap = true;
        if (packet.payloadType === this.options.dtmfPayloadType) {
          this.#events.push(packet.timestamp, packet.payload);
        } else if (packet.payloadType === this.options.redPayloadType) {
          this.#events.pushRedundant(
            packet.timestamp,
            packet.payload,
            this.options.dtmfPayloadType!,
          );
        }
      }
    }
  }

  #audio(timestamp: number, payload: Uint8Array): void {
    this.#events.audioAt(timestamp);
    if (this.#end !== undefined) {
      const gap = (timestamp - this.#end) | 0;
      if (gap < 0) {
        // Overlaps what was played (a sender's timestamp slip): play only what is new.
        if (gap + payload.length <= 0) return;
        payload = payload.subarray(-gap);
      } else if (gap > MAX_FILL) {
        this.#stats.restarts++;
      } else if (gap > 0) {
        this.#fill(gap);
      }
    }
    const pcm = this.#edge.pushPayload(payload);
    this.#samples += pcm.length;
    // Keep the last 20 ms for concealment.
    if (pcm.length >= LINE_FRAME) this.#last.set(pcm.subarray(pcm.length - LINE_FRAME));
    else {
      this.#last.copyWithin(0, pcm.length);
      this.#last.set(pcm, LINE_FRAME - pcm.length);
    }
    this.#end = (timestamp + payload.length) >>> 0;
    this.#fadeAt = 0;
    this.#quietGap = false;
  }

  #fill(gap: number): void {
    const arrived = this.#lastArrival - (this.#firstArrival ?? this.#lastArrival);
    const allowed = Math.max(0, Math.round(arrived * 8) + AHEAD_SLACK - this.#samples);
    const n = Math.min(gap, allowed);
    this.#stats.unfilledSamples += gap - n;
    if (this.#quietGap) this.#stats.silenceSamples += n;
    else this.#stats.concealedSamples += n;
    const out = this.#scratch;
    for (let done = 0; done < n;) {
      const m = Math.min(LINE_FRAME, n - done);
      if (this.#quietGap || this.#fadeAt >= FADE_SAMPLES) out.fill(0, 0, m);
      else {
        for (let i = 0; i < m; i++) {
          const k = this.#fadeAt + i;
          const gain = Math.max(0, 1 - k / FADE_SAMPLES);
          out[i] = Math.round(this.#last[k % LINE_FRAME] * gain);
        }
      }
      this.#fadeAt += m;
      this.#edge.pushPcm(out.subarray(0, m));
      done += m;
    }
    this.#samples += n;
  }
}
