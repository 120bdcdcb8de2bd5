/**
 * Wraps Opus packets as RTP for one audio sender: sequence numbers +1 and timestamps +960
 * (20 ms at the 48 kHz RTP clock) per packet, random starting points (RFC 3550 §5.1).
 * werift stamps the negotiated payload type and the sender's SSRC on the way out.
 *
 * One RtpHeader and one RtpPacket are reused for every send: werift's RTCRtpSender.sendRtp
 * clones the packet (header included) before its first await, so what we hand it is free again
 * when sendRtp returns its promise. It keeps the clone's payload (not a copy) in its NACK
 * history, so a payload is never reused: voiced packets are copied, constant ones are shared.
 * (werift's pending-RTP mode, which queues the packet itself, is off and must stay so.)
 */

import { Buffer } from "node:buffer";
import { RtpHeader, RtpPacket } from "werift";
import { OPUS_PAYLOAD_TYPE } from "./config.ts";

/** What the wrapper needs from werift's RTCRtpSender. */
export interface RtpSink {
  readonly ssrc: number;
  /** Must be done with `packet` (copy or clone it) before returning. */
  sendRtp(packet: RtpPacket): Promise<void>;
}

export const OPUS_SAMPLES_PER_20MS = 960;

/** Buffers over constant packets (e.g. the Opus silence frame), made once per array. */
const constants = new WeakMap<Uint8Array, Buffer>();

export class OpusRtpSender {
  #sink: RtpSink;
  #seq: number;
  #ts: number;
  #marker = true;
  #header = new RtpHeader({ payloadType: OPUS_PAYLOAD_TYPE });
  #packet = new RtpPacket(this.#header, Buffer.alloc(0));
  /** Packets handed to the sink. */
  sent = 0;
  /** Send failures (DTLS write errors); sending keeps going. */
  errors = 0;
  #onError = (_e: unknown) => {
    this.errors++;
  };

  constructor(sink: RtpSink, start: { sequenceNumber?: number; timestamp?: number } = {}) {
    this.#sink = sink;
    const rnd = crypto.getRandomValues(new Uint32Array(2));
    this.#seq = (start.sequenceNumber ?? rnd[0]) & 0xffff;
    this.#ts = (start.timestamp ?? rnd[1]) >>> 0;
  }

  get ssrc(): number {
    return this.#sink.ssrc;
  }

  /**
   * The fraction (0..1) of our packets the far end last reported lost (RTCP receiver report),
   * or undefined before any report. werift keeps it on its sender, private in its types.
   */
  get reportedLoss(): number | undefined {
    const f = (this.#sink as { remoteFractionLost?: number }).remoteFractionLost;
    return typeof f === "number" && Number.isFinite(f) ? f : undefined;
  }
  /** Sequence number of the next packet. */
  get sequenceNumber(): number {
    return this.#seq;
  }
  /** RTP timestamp of the next packet. */
  get timestamp(): number {
    return this.#ts;
  }

  /**
   * Sends one Opus packet (copied: the encoder's buffer is reused). `samples` is its duration
   * at 48 kHz (960 for 20 ms). The first packet after start()/talkspurt() carries the marker.
   */
  send(opus: Uint8Array, samples = OPUS_SAMPLES_PER_20MS): void {
    this.#send(Buffer.from(opus), samples);
  }

  /**
   * Sends a packet whose bytes never change (e.g. OPUS_SILENCE_20MS) without copying it: one
   * Buffer over it is made the first time and shared by every send, on every call.
   */
  sendConstant(opus: Uint8Array, samples = OPUS_SAMPLES_PER_20MS): void {
    let payload = constants.get(opus);
    if (!payload) {
      payload = Buffer.from(opus.buffer, opus.byteOffset, opus.byteLength);
      constants.set(opus, payload);
    }
    this.#send(payload, samples);
  }

  #send(payload: Buffer, samples: number): void {
    const h = this.#header;
    h.payloadType = OPUS_PAYLOAD_TYPE;
    h.sequenceNumber = this.#seq;
    h.timestamp = this.#ts;
    h.ssrc = this.#sink.ssrc;
    h.marker = this.#marker;
    this.#packet.payload = payload;
    this.#marker = false;
    this.#seq = (this.#seq + 1) & 0xffff;
    this.#ts = (this.#ts + samples) >>> 0;
    this.sent++;
    this.#sink.sendRtp(this.#packet).catch(this.#onError);
  }

  /**
   * Advances the timestamp over frames that were not sent (pacer skipped them), so the
   * receiver's clock stays in step with real time. Sequence numbers do not move: nothing was lost.
   */
  skip(frames: number, samplesPerFrame = OPUS_SAMPLES_PER_20MS): void {
    this.#ts = (this.#ts + frames * samplesPerFrame) >>> 0;
    this.#marker = true;
  }

  /** Marks the next packet as the start of a talkspurt (after silence that was not sent). */
  talkspurt(): void {
    this.#marker = true;
  }
}
