/**
 * Echo cancellation of a phone line's caller audio (issue 35): the bot's own voice comes back on
 * a speakerphone, a cheap handset or a hybrid, 30-300 ms late and attenuated, and the VAD would
 * take it for the caller. SpeexDSP's MDF echo canceller (speex_echo_cancellation) removes the
 * linear echo, using the bot's audio as the line sent it as the reference, and its preprocessor
 * (speex_preprocess_run with SPEEX_PREPROCESS_SET_ECHO_STATE) suppresses what is left. Debian's
 * libspeexdsp1, called through Deno FFI as pocketsphinx is (docs/decisions.md says why not
 * WebRTC's module).
 *
 * It works on the call's 16 kHz caller frames (320 samples): one place for SIP and every
 * carrier's stream. The reference is the line's `sent` tap (48 kHz frames, pulled on the frame
 * clock as they go out), brought to 16 kHz by the Speex resampler and kept in a short ring.
 * Pairing is by count: the first caller frame after the bot's audio starts is paired with the
 * frame sent last, and every later caller frame with the sent frame as many frames on, so a burst
 * of caller frames let out together by the jitter buffer keeps its pairs (the filter sees one
 * fixed delay). The pairing is set again only when it would be impossible: a caller frame ahead
 * of what was sent (the caller's clock runs fast, or the line is on hold and sends nothing), or
 * behind the ring (the caller's frames stopped). The filter's tail covers the echo's delay plus
 * the line's jitter buffer.
 */
import { Resampler } from "../../wasm/resampler.ts";

/** What `apt-get install` needs for the canceller. */
export const SPEEXDSP_APT_PACKAGE = "libspeexdsp1";

/** The caller frame: 20 ms at 16 kHz. */
export const ECHO_FRAME = 320;
const RATE = 16_000;
/** How much echo delay the filter covers (the echo's 30-300 ms plus the jitter buffer's depth). */
export const DEFAULT_TAIL_MS = 500;
/** Sent frames kept for pairing: how far a burst of late caller frames may lag (320 ms). */
const RING = 16;
/** Residual echo suppression (dB), with and without the caller talking (speex's defaults: -40, -15). */
const ECHO_SUPPRESS_DB = -40;
const ECHO_SUPPRESS_ACTIVE_DB = -15;

const SPEEX_ECHO_SET_SAMPLING_RATE = 24;
const SPEEX_PREPROCESS_SET_DENOISE = 0;
const SPEEX_PREPROCESS_SET_ECHO_SUPPRESS = 20;
const SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE = 22;
const SPEEX_PREPROCESS_SET_ECHO_STATE = 24;

const symbols = {
  speex_echo_state_init: { parameters: ["i32", "i32"], result: "pointer" },
  speex_echo_state_destroy: { parameters: ["pointer"], result: "void" },
  speex_echo_cancellation: {
    parameters: ["pointer", "buffer", "buffer", "buffer"],
    result: "void",
  },
  speex_echo_ctl: { parameters: ["pointer", "i32", "buffer"], result: "i32" },
  speex_preprocess_state_init: { parameters: ["i32", "i32"], result: "pointer" },
  speex_preprocess_state_destroy: { parameters: ["pointer"], result: "void" },
  speex_preprocess_ctl: { parameters: ["pointer", "i32", "pointer"], result: "i32" },
  speex_preprocess_run: { parameters: ["pointer", "buffer"], result: "i32" },
} as const;

type SpeexDsp = Deno.DynamicLibrary<typeof symbols>["symbols"];
let lib: SpeexDsp | undefined;

/** Thrown when libspeexdsp is not installed. */
export class SpeexDspMissingError extends Error {
  constructor(cause: string) {
    super(
      `echo cancellation needs libspeexdsp (${cause}). Install it with: ` +
        `apt-get install -y ${SPEEXDSP_APT_PACKAGE}`,
    );
    this.name = "SpeexDspMissingError";
  }
}

/** The library, opened once per thread. */
function speexdsp(): SpeexDsp {
  if (lib) return lib;
  try {
    lib = Deno.dlopen("libspeexdsp.so.1", symbols).symbols;
  } catch (err) {
    throw new SpeexDspMissingError((err as Error).message);
  }
  return lib;
}

/** Whether the canceller can run here (the library is installed). */
export function echoCancellerAvailable(): boolean {
  try {
    speexdsp();
    return true;
  } catch {
    return false;
  }
}

export interface EchoCancellerOptions {
  tailMs?: number;
  /** Residual echo suppression after the filter (default on). */
  suppressResidual?: boolean;
}

/** One call's canceller: `sent` for each bot frame the line sends, `process` for each caller frame. */
export class EchoCanceller {
  readonly #dsp: SpeexDsp;
  readonly #echo: Deno.PointerValue;
  readonly #pre: Deno.PointerValue;
  readonly #down = new Resampler(48_000, RATE, { quality: 5 });
  readonly #ring = Array.from({ length: RING }, () => new Int16Array(ECHO_FRAME));
  /** Frames sent so far, and caller frames processed. */
  #sentCount = 0;
  #heardCount = 0;
  /** Caller frame n is paired with sent frame n + offset (undefined until the bot first sends). */
  #offset?: number;
  readonly #zeros48k = new Int16Array(960);
  readonly #out = new Int16Array(ECHO_FRAME);
  #closed = false;
  /** Counts for the session record: frames processed, and how often the pairing was set again. */
  readonly counts = { frames: 0, realigned: 0 };

  constructor(options: EchoCancellerOptions = {}) {
    const dsp = this.#dsp = speexdsp();
    const tail = Math.round((options.tailMs ?? DEFAULT_TAIL_MS) * RATE / 1000);
    this.#echo = dsp.speex_echo_state_init(ECHO_FRAME, tail);
    dsp.speex_echo_ctl(this.#echo, SPEEX_ECHO_SET_SAMPLING_RATE, new Int32Array([RATE]));
    this.#pre = dsp.speex_preprocess_state_init(ECHO_FRAME, RATE);
    // Only the echo is its business: the call's own noise suppression is a separate choice.
    this.#ctl(SPEEX_PREPROCESS_SET_DENOISE, 0);
    if (options.suppressResidual !== false) {
      dsp.speex_preprocess_ctl(this.#pre, SPEEX_PREPROCESS_SET_ECHO_STATE, this.#echo);
      this.#ctl(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, ECHO_SUPPRESS_DB);
      this.#ctl(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, ECHO_SUPPRESS_ACTIVE_DB);
    }
  }

  #ctl(request: number, value: number): void {
    const v = new Int32Array([value]);
    this.#dsp.speex_preprocess_ctl(this.#pre, request, Deno.UnsafePointer.of(v));
  }

  /** The bot's 48 kHz frame (960 samples) as the line sent it; undefined = silence went out. */
  sent(frame48k: Int16Array | undefined): void {
    if (this.#closed) return;
    const pcm = this.#down.process(frame48k ?? this.#zeros48k);
    const slot = this.#ring[this.#sentCount % RING];
    // The resampler's first output is short by its delay: that frame is padded at the front.
    slot.fill(0);
    slot.set(pcm.subarray(0, ECHO_FRAME), ECHO_FRAME - Math.min(ECHO_FRAME, pcm.length));
    this.#sentCount++;
  }

  /** One 16 kHz caller frame (320 samples) with the bot's echo taken out; reused by the next call. */
  process(frame: Int16Array): Int16Array {
    if (this.#closed || frame.length !== ECHO_FRAME) return frame;
    const n = this.#heardCount++;
    if (this.#sentCount === 0) return frame; // the bot has sent nothing: nothing to cancel yet
    let at = n + (this.#offset ?? 0);
    if (this.#offset === undefined || at >= this.#sentCount || at < this.#sentCount - RING) {
      if (this.#offset !== undefined) this.counts.realigned++;
      this.#offset = this.#sentCount - 1 - n;
      at = this.#sentCount - 1;
    }
    this.counts.frames++;
    this.#dsp.speex_echo_cancellation(this.#echo, frame, this.#ring[at % RING], this.#out);
    this.#dsp.speex_preprocess_run(this.#pre, this.#out);
    return this.#out;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#dsp.speex_preprocess_state_destroy(this.#pre);
    this.#dsp.speex_echo_state_destroy(this.#echo);
    this.#down.close();
  }
}
