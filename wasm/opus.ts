/**
 * Opus encode/decode through WebAssembly, for the worker's hot path.
 *
 * Choice (bench/media/opus_choice.ts, 1500 frames x 3 rounds, this 2-core VM, per 20 ms frame):
 *
 * | build                                   | encode 48k mono | decode 16k mono | decode 48k |
 * |-----------------------------------------|-----------------|-----------------|------------|
 * | @evan/opus wasm, public API             | 0.100 ms        | 0.021 ms        | 0.023 ms   |
 * | opusscript wasm, public API             | 0.300 ms        | 0.027 ms        | 0.038 ms   |
 * | @evan/opus wasm, raw libopus exports    | 0.100-0.107 ms  | 0.021 ms        | 0.022 ms   |
 * | opusscript wasm, embind handler + heap  | 0.091 ms        | 0.019-0.020 ms  | 0.021 ms   |
 *
 * The two low-level paths are equal within noise (~0.12 ms encode+decode per call per 20 ms,
 * i.e. ~0.6% of one core, on that bench's signal). On speech (the espeak-ng sentence of
 * bench/media/echo_calls.ts, 2026-11-25) encoding costs more: 0.41 ms a frame at the default
 * complexity 9, 0.21 ms at 5, 0.17 at 3; decoding at 48 kHz 0.045 ms (the bot's voice is encoded
 * at 5: media/call/outbound.ts). We use @evan/opus's `simd.wasm` through its raw libopus C
 * exports: it is the plain libopus API (opus_decode with a null packet gives concealment of
 * exactly one frame, ctl get/set for bitrate/complexity/FEC), encoder and decoder are separate
 * objects at their own rates, and there is no emscripten runtime. opusscript couples one encoder and one
 * decoder at one rate per handler and its decode cannot conceal an exact frame length.
 *
 * All calls are synchronous and share two scratch areas inside the WASM memory; results are
 * copied into per-object buffers that are reused from call to call (no per-frame allocation).
 */

import { createRequire } from "node:module";

/** 20 ms of 48 kHz mono. */
export const FRAME_SAMPLES_48K = 960;
/** 20 ms of 16 kHz mono. */
export const FRAME_SAMPLES_16K = 320;

/**
 * One 20 ms Opus frame of digital silence (TOC 0xf8: CELT fullband 20 ms, mono, one frame).
 * Sent when the bot is quiet so RTP keeps flowing; decodes to zeros at any rate.
 */
export const OPUS_SILENCE_20MS: Uint8Array = Uint8Array.of(0xf8, 0xff, 0xfe);

const OPUS_APPLICATION = { voip: 2048, audio: 2049 } as const;
const CTL = {
  setBitrate: 4002,
  setComplexity: 4010,
  setInbandFec: 4012,
  setPacketLossPerc: 4014,
  setMaxBandwidth: 4004,
  resetState: 4028,
} as const;
// 120 ms at 48 kHz is the longest frame Opus can carry.
const MAX_FRAME_SAMPLES = 5760;
const MAX_PACKET_BYTES = 4000;

// Frame durations in 48 kHz samples by TOC config (RFC 6716 §3.1, Table 2).
const SILK_FRAME_48K = [480, 960, 1920, 2880]; // 10, 20, 40, 60 ms (configs 0-11)
const HYBRID_FRAME_48K = [480, 960]; // 10, 20 ms (configs 12-15)
const CELT_FRAME_48K = [120, 240, 480, 960]; // 2.5, 5, 10, 20 ms (configs 16-31)

/**
 * The duration of an Opus packet in 48 kHz samples, read from its TOC byte (and, for code 3,
 * the frame count byte) without decoding: 960 for a 20 ms packet. Undefined for an empty or
 * malformed packet (code 3 without its count byte, a count of 0, more than 120 ms: the header
 * checks of libopus's opus_packet_parse). The frames themselves are not checked.
 */
export function opusPacketSamples48k(packet: Uint8Array): number | undefined {
  if (packet.length === 0) return undefined;
  const toc = packet[0];
  const config = toc >> 3;
  const frame = config < 12
    ? SILK_FRAME_48K[config & 3]
    : config < 16
    ? HYBRID_FRAME_48K[config & 1]
    : CELT_FRAME_48K[config & 3];
  const code = toc & 3;
  let frames = code === 0 ? 1 : 2;
  if (code === 3) {
    if (packet.length < 2) return undefined;
    frames = packet[1] & 0x3f;
    if (frames === 0) return undefined;
  }
  const samples = frames * frame;
  return samples > MAX_FRAME_SAMPLES ? undefined : samples;
}

interface OpusExports {
  memory: WebAssembly.Memory;
  malloc(n: number): number;
  free(p: number): void;
  opus_strerror(code: number): number;
  opus_decoder_get_size(channels: number): number;
  opus_decoder_init(p: number, rate: number, channels: number): number;
  opus_decode(
    p: number,
    data: number,
    len: number,
    pcm: number,
    frame: number,
    fec: number,
  ): number;
  opus_decoder_ctl_get(p: number, cmd: number): number;
  opus_encoder_get_size(channels: number): number;
  opus_encoder_init(p: number, rate: number, channels: number, app: number): number;
  opus_encode(p: number, pcm: number, frame: number, data: number, max: number): number;
  opus_encoder_ctl_set(p: number, cmd: number, arg: number): number;
  opus_encoder_ctl_get(p: number, cmd: number): number;
}

/** Thrown for any libopus error code (e.g. a corrupted packet). */
export class OpusError extends Error {
  constructor(readonly op: string, readonly code: number, detail: string) {
    super(`opus ${op} failed: ${detail} (code ${code})`);
    this.name = "OpusError";
  }
}

class OpusModule {
  readonly w: OpusExports;
  readonly pcmPtr: number;
  readonly pktPtr: number;
  #buffer: ArrayBufferLike | null = null;
  #pcm!: Int16Array;
  #pkt!: Uint8Array;

  constructor() {
    const require = createRequire(import.meta.url);
    const dir = require.resolve("@evan/opus/wasm/index.js").replace(/index\.js$/, "");
    // Same SIMD probe as @evan/opus: a module using a v128 op validates only with SIMD support.
    const simd = WebAssembly.validate(
      Uint8Array.of(
        0,
        97,
        115,
        109,
        1,
        0,
        0,
        0,
        1,
        4,
        1,
        96,
        0,
        0,
        3,
        2,
        1,
        0,
        10,
        9,
        1,
        7,
        0,
        65,
        0,
        253,
        15,
        26,
        11,
      ),
    );
    const bytes = Deno.readFileSync(dir + (simd ? "simd.wasm" : "opus.wasm"));
    const noop = () => 0;
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
      wasi_snapshot_preview1: { fd_seek: noop, fd_write: noop, fd_close: noop, proc_exit: noop },
      env: { emscripten_notify_memory_growth: noop },
    });
    this.w = instance.exports as unknown as OpusExports;
    this.pcmPtr = this.w.malloc(MAX_FRAME_SAMPLES * 2 * 2);
    this.pktPtr = this.w.malloc(MAX_PACKET_BYTES);
  }

  /** Views on the scratch areas; rebuilt only when the memory has grown (buffer replaced). */
  pcm(): Int16Array {
    this.#refresh();
    return this.#pcm;
  }
  pkt(): Uint8Array {
    this.#refresh();
    return this.#pkt;
  }
  #refresh(): void {
    const buf = this.w.memory.buffer;
    if (buf === this.#buffer) return;
    this.#buffer = buf;
    this.#pcm = new Int16Array(buf, this.pcmPtr, MAX_FRAME_SAMPLES * 2);
    this.#pkt = new Uint8Array(buf, this.pktPtr, MAX_PACKET_BYTES);
  }

  strerror(code: number): string {
    const u8 = new Uint8Array(this.w.memory.buffer);
    let s = "";
    for (let p = this.w.opus_strerror(code); u8[p] !== 0 && s.length < 200; p++) {
      s += String.fromCharCode(u8[p]);
    }
    return s;
  }

  check(op: string, code: number): number {
    if (code < 0) throw new OpusError(op, code, this.strerror(code));
    return code;
  }
}

let mod: OpusModule | null = null;
function opus(): OpusModule {
  return mod ??= new OpusModule();
}

const freeState = new FinalizationRegistry<number>((ptr) => mod?.w.free(ptr));

export interface OpusDecoderOptions {
  /** Output rate. 16000 for the recogniser (no resampler needed), 48000 for echo/playback. */
  sampleRate?: 16000 | 48000;
}

/** Mono Opus decoder. Output buffers are owned by the decoder and reused on every call. */
export class OpusDecoder {
  readonly sampleRate: 16000 | 48000;
  /** Samples in one 20 ms frame at this rate (320 or 960). */
  readonly frameSamples: number;
  #ptr: number;
  #out: Int16Array;
  #frame: Int16Array;

  constructor(options: OpusDecoderOptions = {}) {
    const m = opus();
    this.sampleRate = options.sampleRate ?? 16000;
    this.frameSamples = this.sampleRate / 50;
    this.#ptr = m.w.malloc(m.w.opus_decoder_get_size(1));
    const rc = m.w.opus_decoder_init(this.#ptr, this.sampleRate, 1);
    if (rc < 0) {
      m.w.free(this.#ptr);
      m.check("decoder init", rc);
    }
    freeState.register(this, this.#ptr, this);
    this.#out = new Int16Array((MAX_FRAME_SAMPLES * this.sampleRate) / 48000);
    this.#frame = this.#out.subarray(0, this.frameSamples);
  }

  /**
   * Decodes one packet. Returns a view of the decoder's reused buffer, valid until the next
   * call: 320 samples at 16 kHz (960 at 48 kHz) for a 20 ms packet. An empty packet is treated
   * as a lost one (concealment). A corrupted packet throws OpusError; call conceal() to fill in.
   */
  decode(packet: Uint8Array): Int16Array {
    if (packet.length === 0) return this.conceal();
    if (packet.length > MAX_PACKET_BYTES) {
      throw new OpusError("decode", -4, `packet too large (${packet.length} bytes)`);
    }
    const m = opus();
    this.#alive();
    m.pkt().set(packet);
    const n = m.check(
      "decode",
      m.w.opus_decode(this.#ptr, m.pktPtr, packet.length, m.pcmPtr, this.#out.length, 0),
    );
    return this.#copyOut(m, n);
  }

  /**
   * Rebuilds a lost 20 ms frame from the in-band FEC that `next` (the packet after it) carries;
   * libopus conceals instead when `next` has none. Decode `next` itself afterwards as usual.
   */
  recover(next: Uint8Array): Int16Array {
    if (next.length === 0 || next.length > MAX_PACKET_BYTES) return this.conceal();
    const m = opus();
    this.#alive();
    m.pkt().set(next);
    const n = m.check(
      "recover",
      m.w.opus_decode(this.#ptr, m.pktPtr, next.length, m.pcmPtr, this.frameSamples, 1),
    );
    return this.#copyOut(m, n);
  }

  /** Packet-loss concealment for one 20 ms frame (libopus PLC; zeros before any packet). */
  conceal(): Int16Array {
    const m = opus();
    this.#alive();
    const n = m.check("conceal", m.w.opus_decode(this.#ptr, 0, 0, m.pcmPtr, this.frameSamples, 0));
    return this.#copyOut(m, n);
  }

  /** Forgets the decoder's history (e.g. a new stream on the same object). */
  reset(): void {
    this.#alive();
    opus().w.opus_decoder_ctl_get(this.#ptr, CTL.resetState);
  }

  /** Frees the WASM state now rather than at garbage collection. */
  close(): void {
    if (!this.#ptr) return;
    freeState.unregister(this);
    opus().w.free(this.#ptr);
    this.#ptr = 0;
  }

  #copyOut(m: OpusModule, n: number): Int16Array {
    const src = m.pcm();
    if (n === this.frameSamples) {
      this.#frame.set(src.subarray(0, n));
      return this.#frame;
    }
    this.#out.set(src.subarray(0, n));
    return this.#out.subarray(0, n);
  }

  #alive(): void {
    if (!this.#ptr) throw new Error("OpusDecoder is closed");
  }
}

export interface OpusEncoderOptions {
  /** Input rate (default 48000). The coded band still follows bitrate and maxBandwidth. */
  sampleRate?: 16000 | 24000 | 48000;
  /** Target bitrate in bit/s (default 32000: clear wideband-plus speech at ~80 B/packet). */
  bitrate?: number;
  /** 0-10; libopus default (9) when omitted. Lower trades quality for CPU. */
  complexity?: number;
  /** "voip" (default) tunes for speech; "audio" for music. */
  application?: "voip" | "audio";
  /** Enables in-band FEC, tuned for this expected loss percentage. */
  expectedLossPercent?: number;
  /**
   * The widest audio band the encoder may code (libopus OPUS_SET_MAX_BANDWIDTH). "wideband"
   * (0-8 kHz) keeps speech in SILK alone; wider bands add CELT's high band (hybrid mode).
   */
  maxBandwidth?: OpusBandwidth;
}

/** Opus audio bandwidths (RFC 6716 §2): the top of the coded band. */
export type OpusBandwidth = "narrowband" | "mediumband" | "wideband" | "superwideband" | "fullband";
const BANDWIDTH: Record<OpusBandwidth, number> = {
  narrowband: 1101, // 4 kHz
  mediumband: 1102, // 6 kHz
  wideband: 1103, // 8 kHz
  superwideband: 1104, // 12 kHz
  fullband: 1105, // 20 kHz
};

/** Mono Opus encoder of 20 ms frames (48 kHz input unless told). */
export class OpusEncoder {
  readonly sampleRate: 16000 | 24000 | 48000;
  /** Samples in one 20 ms frame at this rate (320, 480 or 960). */
  readonly frameSamples: number;
  #ptr: number;
  #out = new Uint8Array(MAX_PACKET_BYTES);

  constructor(options: OpusEncoderOptions = {}) {
    const m = opus();
    this.sampleRate = options.sampleRate ?? 48000;
    this.frameSamples = this.sampleRate / 50;
    this.#ptr = m.w.malloc(m.w.opus_encoder_get_size(1));
    const app = OPUS_APPLICATION[options.application ?? "voip"];
    const rc = m.w.opus_encoder_init(this.#ptr, this.sampleRate, 1, app);
    if (rc < 0) {
      m.w.free(this.#ptr);
      m.check("encoder init", rc);
    }
    freeState.register(this, this.#ptr, this);
    m.check(
      "set bitrate",
      m.w.opus_encoder_ctl_set(this.#ptr, CTL.setBitrate, options.bitrate ?? 32000),
    );
    if (options.complexity !== undefined) {
      m.check(
        "set complexity",
        m.w.opus_encoder_ctl_set(this.#ptr, CTL.setComplexity, options.complexity),
      );
    }
    if (options.expectedLossPercent !== undefined) {
      m.check("set fec", m.w.opus_encoder_ctl_set(this.#ptr, CTL.setInbandFec, 1));
      m.check(
        "set loss",
        m.w.opus_encoder_ctl_set(this.#ptr, CTL.setPacketLossPerc, options.expectedLossPercent),
      );
    }
    if (options.maxBandwidth !== undefined) {
      m.check(
        "set max bandwidth",
        m.w.opus_encoder_ctl_set(this.#ptr, CTL.setMaxBandwidth, BANDWIDTH[options.maxBandwidth]),
      );
    }
  }

  /**
   * Tunes in-band FEC for `percent` expected packet loss (0 turns FEC off): libopus then spends
   * bits on a low-rate copy of each frame inside the next packet, as much as the loss warrants.
   */
  setExpectedLoss(percent: number): void {
    if (!this.#ptr) throw new Error("OpusEncoder is closed");
    const loss = Math.max(0, Math.min(100, Math.round(percent)));
    const m = opus();
    m.check("set fec", m.w.opus_encoder_ctl_set(this.#ptr, CTL.setInbandFec, loss > 0 ? 1 : 0));
    m.check("set loss", m.w.opus_encoder_ctl_set(this.#ptr, CTL.setPacketLossPerc, loss));
  }

  /**
   * Encodes one 20 ms frame (frameSamples: 960 at 48 kHz). Returns a view of the encoder's
   * reused buffer, valid until the next call: copy it to keep it.
   */
  encode(pcm: Int16Array): Uint8Array {
    if (pcm.length !== this.frameSamples) {
      throw new RangeError(
        `OpusEncoder.encode needs ${this.frameSamples} samples, got ${pcm.length}`,
      );
    }
    if (!this.#ptr) throw new Error("OpusEncoder is closed");
    const m = opus();
    m.pcm().set(pcm);
    const n = m.check(
      "encode",
      m.w.opus_encode(this.#ptr, m.pcmPtr, this.frameSamples, m.pktPtr, MAX_PACKET_BYTES),
    );
    this.#out.set(m.pkt().subarray(0, n));
    return this.#out.subarray(0, n);
  }

  /** Frees the WASM state now rather than at garbage collection. */
  close(): void {
    if (!this.#ptr) return;
    freeState.unregister(this);
    opus().w.free(this.#ptr);
    this.#ptr = 0;
  }
}
