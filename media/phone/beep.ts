// A voicemail beep, found frame by frame: a steady tone (one frequency in 400-2000 Hz carrying
// most of a frame's energy) that lasts at least minMs. Pure: frames in, a verdict per frame out;
// no timers, no I/O. machine_detection.ts uses it before and after its decision.
//
// How: a Goertzel bank, one filter every stepHz over the band, run on each whole frame (a 20 ms
// frame at 8 kHz is 160 samples, a 50 Hz bin; filters 25 Hz apart keep a tone between two of them
// within a quarter bin, where it still shows ≥ 81 % of its energy). A frame is tonal when its
// strongest filter holds at least `purity` of the frame's energy and the frame is louder than
// floorDbfs. Speech spreads its energy over harmonics and formants (a single filter seldom holds
// half of it), noise over the whole band, so neither passes; a run of tonal frames at one
// frequency (within driftHz) is a tone. One more check when a run reaches minMs: over its last
// checkMs, a finer bank (2 Hz apart around the run's frequency, a window long enough to resolve
// ~8 Hz) must still find `finePurity` of the energy at one frequency. A beep's frequency is fixed,
// while a voice's harmonic glides with its pitch and smears over that window: a high voice on a
// phone line (its fundamental below the 300 Hz band edge) can leave one harmonic with 80-90 % of
// a 20 ms frame's energy, and the short test alone took such a vowel for a beep.
//
// Written here, not a dependency: npm's Goertzel packages are DTMF decoders at fixed frequencies,
// unmaintained for years; the bank is ~30 lines and costs ~65 × 160 multiply-adds per frame.

export interface BeepOptions {
  /** Lowest and highest tone frequency looked for, Hz (default 400 and 2000). */
  lowHz?: number;
  highHz?: number;
  /** Spacing of the Goertzel filters, Hz (default 25). */
  stepHz?: number;
  /** Share of a frame's energy the strongest filter must hold (default 0.6). */
  purity?: number;
  /** Frames quieter than this (RMS, dBFS) are never tonal (default -40). */
  floorDbfs?: number;
  /** A tone must last this long to be a beep (default 150 ms). */
  minMs?: number;
  /** The tone's frequency may wander this far between frames, Hz (default 40). */
  driftHz?: number;
  /** A tone still going after this long is reported anyway (default 2000 ms). */
  maxMs?: number;
  /** The fine check's window (default 120 ms) and the share it needs (default 0.85). */
  checkMs?: number;
  finePurity?: number;
}

export const DEFAULT_BEEP_OPTIONS: Readonly<Required<BeepOptions>> = Object.freeze({
  lowHz: 400,
  highHz: 2000,
  stepHz: 25,
  purity: 0.6,
  floorDbfs: -40,
  minMs: 150,
  driftHz: 25,
  maxMs: 2000,
  checkMs: 120,
  finePurity: 0.85,
});

/** What one frame showed. */
export interface ToneFrame {
  tonal: boolean;
  /** The strongest filter's frequency, Hz. */
  hz: number;
  /** Its share of the frame's energy (0..1). */
  purity: number;
}

/** A beep heard: where its tone started and ended (audio time, ms) and its frequency. */
export interface Beep {
  startMs: number;
  endMs: number;
  hz: number;
}

/** Goertzel power of `pcm` at coefficient c (2·cos(2πf/rate)). */
function goertzel(pcm: ArrayLike<number>, c: number): number {
  let s1 = 0, s2 = 0;
  for (let i = 0; i < pcm.length; i++) {
    const s = pcm[i] + c * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - c * s1 * s2;
}

/** The largest share of `pcm`'s energy at one frequency in lowHz..highHz, stepHz apart. */
export function purityOf(
  pcm: ArrayLike<number>,
  sampleRate: number,
  lowHz: number,
  highHz: number,
  stepHz: number,
): { hz: number; purity: number } {
  let energy = 0;
  for (let i = 0; i < pcm.length; i++) energy += pcm[i] * pcm[i];
  let best = 0, hz = lowHz;
  for (let f = lowHz; f <= highHz; f += stepHz) {
    const p = goertzel(pcm, 2 * Math.cos((2 * Math.PI * f) / sampleRate));
    if (p > best) (best = p, hz = f);
  }
  // A full-length sinusoid of amplitude A on a bin gives power (N·A/2)² and energy N·A²/2:
  // 2·power / (N·energy) is its share, 1 for a pure tone on the bin.
  return { hz, purity: energy > 0 ? Math.min(1, (2 * best) / (pcm.length * energy)) : 0 };
}

/** The Goertzel bank on one frame. */
export class ToneBank {
  readonly #coeffs: Float64Array;
  readonly #freqs: Float64Array;
  readonly #floor: number;

  constructor(readonly sampleRate: number, readonly options: Required<BeepOptions>) {
    const n = Math.floor((options.highHz - options.lowHz) / options.stepHz) + 1;
    this.#freqs = new Float64Array(n);
    this.#coeffs = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      const f = options.lowHz + k * options.stepHz;
      this.#freqs[k] = f;
      this.#coeffs[k] = 2 * Math.cos((2 * Math.PI * f) / sampleRate);
    }
    // Mean square of a 16-bit frame at floorDbfs (0 dBFS: a full-scale sample).
    this.#floor = (32768 * 10 ** (options.floorDbfs / 20)) ** 2;
  }

  frame(pcm: Int16Array): ToneFrame {
    const n = pcm.length;
    let energy = 0;
    for (let i = 0; i < n; i++) energy += pcm[i] * pcm[i];
    if (n === 0 || energy / n < this.#floor) return { tonal: false, hz: 0, purity: 0 };
    let best = 0, bestK = 0;
    for (let k = 0; k < this.#coeffs.length; k++) {
      const power = goertzel(pcm, this.#coeffs[k]);
      if (power > best) (best = power, bestK = k);
    }
    // As in purityOf: 1 for a pure tone on the bin.
    const purity = Math.min(1, (2 * best) / (n * energy));
    return { tonal: purity >= this.options.purity, hz: this.#freqs[bestK], purity };
  }
}

/**
 * Runs of tonal frames into beeps. push() takes consecutive frames and returns a Beep once a run
 * of at least minMs ends (or reaches maxMs), else undefined. `tonalNow` says whether the last
 * frame was part of a tone run (so a speech detector can ignore it).
 */
export class BeepDetector {
  readonly options: Required<BeepOptions>;
  readonly #bank: ToneBank;
  #clockMs = 0;
  /** checked: the run passed the fine check (or is not yet minMs long); failed: it did not. */
  #run?: { startMs: number; hz: number; reported: boolean; checked: boolean; failed: boolean };
  /** The last checkMs of audio, oldest first (a ring, `#at` its next write). */
  readonly #history: Float64Array;
  #at = 0;
  tonalNow = false;

  constructor(readonly sampleRate = 8000, options: BeepOptions = {}) {
    this.options = { ...DEFAULT_BEEP_OPTIONS, ...options };
    this.#bank = new ToneBank(sampleRate, this.options);
    this.#history = new Float64Array(Math.round((this.options.checkMs * sampleRate) / 1000));
  }

  /** The fine check over the last `ms` of audio (at most checkMs) around `hz`. */
  #steady(hz: number, ms: number): boolean {
    const h = this.#history, n = Math.min(h.length, Math.round((ms * this.sampleRate) / 1000));
    const window = new Float64Array(n);
    for (let i = 0; i < n; i++) window[i] = h[(this.#at - n + i + h.length) % h.length];
    const { stepHz } = this.options;
    return purityOf(window, this.sampleRate, hz - stepHz, hz + stepHz, 2).purity >=
      this.options.finePurity;
  }

  /** Audio time after the last frame pushed, ms. */
  get clockMs(): number {
    return this.#clockMs;
  }

  /** The tone in progress once it has lasted minMs and passed the fine check (still going). */
  get tone(): { startMs: number; hz: number } | undefined {
    const run = this.#run;
    return run?.checked && !run.failed ? { startMs: run.startMs, hz: run.hz } : undefined;
  }

  /** Start of the tone run in progress (any length), if one is. */
  get runStartMs(): number | undefined {
    return this.#run?.startMs;
  }

  push(pcm: Int16Array): Beep | undefined {
    const startMs = this.#clockMs;
    this.#clockMs += (pcm.length * 1000) / this.sampleRate;
    const h = this.#history;
    for (let i = 0; i < pcm.length; i++) {
      (h[this.#at] = pcm[i], this.#at = (this.#at + 1) % h.length);
    }
    const f = this.#bank.frame(pcm);
    const run = this.#run;
    const same = run !== undefined && f.tonal && Math.abs(f.hz - run.hz) <= this.options.driftHz;
    this.tonalNow = f.tonal;
    if (same) {
      const long = this.#clockMs - run.startMs;
      if (!run.checked && long >= this.options.minMs) {
        run.checked = true;
        run.failed = !this.#steady(run.hz, long);
      }
      if (!run.reported && !run.failed && long >= this.options.maxMs) {
        run.reported = true;
        return { startMs: run.startMs, endMs: this.#clockMs, hz: run.hz };
      }
      return undefined;
    }
    // The run (if any) ended at this frame's start; a tonal frame at another pitch starts anew.
    this.#run = f.tonal
      ? { startMs, hz: f.hz, reported: false, checked: false, failed: false }
      : undefined;
    if (run && !run.reported && !run.failed && startMs - run.startMs >= this.options.minMs) {
      return { startMs: run.startMs, endMs: startMs, hz: run.hz };
    }
    return undefined;
  }
}
