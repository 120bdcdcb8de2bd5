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
 * frame sent last, and every later caller frame with the sent frame as many frames on, so the
 * filter sees one fixed delay however the two clocks' ticks interleave. A caller frame whose
 * pair has not gone out yet (the caller's packet came a moment before the worker's tick) waits
 * for it, at most MAX_WAIT frames; the pairing is set again only when it cannot hold: more
 * frames waiting than that (the caller's clock runs fast, or the line is on hold and sends
 * nothing), or a pair older than the ring (the caller's frames stopped). The filter's tail
 * covers the echo's delay plus the line's jitter buffer.
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
/** Sent frames whose level the gate weighs a caller frame against: the filter's tail. */
const GATE_WINDOW = 25;
/** Below this RMS the bot is quiet in that window: nothing to gate. */
const GATE_QUIET_RMS = 100;
/**
 * The gate's bound, a level against the bot's: at first -3 dB (above the loudest echo a line
 * gives, -6 dB), then 16 dB above the residual the filter is measured to leave (it swings by
 * several dB from syllable to syllable), within -30 dB..-3 dB.
 */
const GATE_START = 0.7, GATE_MIN = 0.03, GATE_MARGIN = 6;
/** How fast the measured residual follows a frame taken for echo: up at once, down slowly. */
const GATE_RISE = 0.3, GATE_FALL = 0.02;
/**
 * Frames the gate stays open after one well over the bound (6 dB): the caller is talking, and
 * their quieter sounds (consonants, word ends) must not be cut between the loud ones (200 ms).
 */
const GATE_HANGOVER = 10;
/** A residual quieter than this RMS says nothing of the filter (the echo has not come yet). */
const GATE_MEASURE_RMS = 30;
/** What a gated frame keeps (-40 dB): echo below anything the VAD takes for a voice. */
const GATE_KEEP = 0.01;
/** Caller frames that may wait for their pair (100 ms at most added to the caller's audio). */
const MAX_WAIT = 5;
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
  /** The gate on what the filter leaves while it learns (default on; off to weigh the filter). */
  gate?: boolean;
}

/**
 * One call's canceller: `sent` for each bot frame the line sends, `push` for each caller frame;
 * the caller's frames come out, in order and echo-free, to `deliver`.
 */
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
  /** Each sent frame's RMS at 16 kHz, by sent-frame number mod the ring. */
  readonly #levels = new Float64Array(RING * 2);
  /** The residual echo's level against the bot's, measured on frames taken for echo (the gate). */
  #residual = GATE_START / GATE_MARGIN;
  /** Frames the gate stays open for: the caller was heard over the bot (double-talk). */
  #hangover = 0;
  /** Caller frames waiting for their pair to be sent: [frame number, copy]. */
  readonly #waiting: [number, Int16Array][] = [];
  readonly #zeros48k = new Int16Array(960);
  readonly #gated: boolean;
  readonly #suppress: boolean;
  readonly #out = new Int16Array(ECHO_FRAME);
  #closed = false;
  /** Counts for the session record: frames processed, and how often the pairing was set again. */
  readonly counts = { frames: 0, realigned: 0, gated: 0 };

  constructor(
    /** Gets each caller frame with the echo taken out (a reused buffer: copy what you keep). */
    private readonly deliver: (pcm16k: Int16Array) => void,
    options: EchoCancellerOptions = {},
  ) {
    const dsp = this.#dsp = speexdsp();
    this.#gated = options.gate !== false;
    this.#suppress = options.suppressResidual !== false;
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
    this.#keep(frame48k);
    this.#drain();
  }

  #keep(frame48k: Int16Array | undefined): void {
    const pcm = this.#down.process(frame48k ?? this.#zeros48k);
    const slot = this.#ring[this.#sentCount % RING];
    // The resampler's first output is short by its delay: that frame is padded at the front.
    slot.fill(0);
    slot.set(pcm.subarray(0, ECHO_FRAME), ECHO_FRAME - Math.min(ECHO_FRAME, pcm.length));
    this.#levels[this.#sentCount % this.#levels.length] = frame48k ? rms(slot) : 0;
    this.#sentCount++;
  }

  /** One 16 kHz caller frame (320 samples); it reaches `deliver` once its pair has been sent. */
  push(frame: Int16Array): void {
    if (this.#closed || frame.length !== ECHO_FRAME) return this.deliver(frame);
    const n = this.#heardCount++;
    // The bot has sent nothing yet: there is nothing to cancel.
    if (this.#sentCount === 0) return this.deliver(frame);
    this.#offset ??= this.#sentCount - 1 - n;
    if (n + this.#offset < this.#sentCount - RING) this.#realign(n);
    this.#waiting.push([n, frame.slice()]);
    this.#drain();
    while (this.#waiting.length > MAX_WAIT) {
      this.#realign(this.#waiting[0][0]);
      this.#drain();
    }
  }

  /** Caller frame n is paired from now on with the frame sent last. */
  #realign(n: number): void {
    this.counts.realigned++;
    this.#offset = this.#sentCount - 1 - n;
    // The filter must learn the new delay: the gate starts again from its safe bound.
    this.#residual = GATE_START / GATE_MARGIN;
    this.#hangover = 0;
  }

  /** Every waiting caller frame whose pair has been sent, through the filter, in order. */
  #drain(): void {
    const offset = this.#offset;
    if (offset === undefined) return;
    while (this.#waiting.length > 0 && this.#waiting[0][0] + offset < this.#sentCount) {
      const [n, frame] = this.#waiting.shift()!;
      this.counts.frames++;
      const ref = this.#ring[(n + offset) % RING];
      this.#dsp.speex_echo_cancellation(this.#echo, frame, ref, this.#out);
      if (this.#suppress) this.#dsp.speex_preprocess_run(this.#pre, this.#out);
      if (this.#gated) this.#gate(n + offset);
      this.deliver(this.#out);
    }
  }

  /**
   * What the filter leaves while it is still learning the line (speech takes it seconds; the VAD
   * decides in 64 ms while the bot speaks) is still speech-like: a frame no louder than the echo
   * the bot's recent audio can leave is taken for echo and cut to -40 dB. That bound starts at
   * -3 dB of the bot's level (above the loudest echo a line gives) and follows what the filter
   * achieves, so once it has converged a caller far quieter than the bot still gets through. A
   * frame louder than the bound is the caller (double-talk): the gate then stays open for 200 ms
   * so their quieter sounds are not cut.
   */
  #gate(pair: number): void {
    let bot = 0;
    for (let k = Math.max(0, pair - GATE_WINDOW + 1); k <= pair; k++) {
      bot = Math.max(bot, this.#levels[k % this.#levels.length]);
    }
    if (bot < GATE_QUIET_RMS) return;
    const level = rms(this.#out);
    const ratio = level / bot, bound = GATE_MARGIN * this.#residual;
    if (ratio > bound) {
      // Louder than the echo can be: the caller talks (and surely so well over it).
      if (ratio > 2 * bound) this.#hangover = GATE_HANGOVER;
      return;
    }
    if (this.#hangover > 0) {
      this.#hangover--;
      return;
    }
    if (level > GATE_MEASURE_RMS) {
      this.#residual += (ratio > this.#residual ? GATE_RISE : GATE_FALL) * (ratio - this.#residual);
      this.#residual = Math.min(GATE_START, Math.max(GATE_MIN, GATE_MARGIN * this.#residual)) /
        GATE_MARGIN;
    }
    for (let i = 0; i < ECHO_FRAME; i++) this.#out[i] = Math.round(this.#out[i] * GATE_KEEP);
    this.counts.gated++;
  }

  /** Frames still waiting go out as they are (the call is ending: keep its length). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const [, frame] of this.#waiting.splice(0)) this.deliver(frame);
    this.#dsp.speex_preprocess_state_destroy(this.#pre);
    this.#dsp.speex_echo_state_destroy(this.#echo);
    this.#down.close();
  }
}

function rms(pcm: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
  return Math.sqrt(sum / pcm.length);
}
