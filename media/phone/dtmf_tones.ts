/**
 * In-band DTMF: keys a trunk or carrier sends as tones in the caller's audio instead of as RFC
 * 4733 events or dtmf messages. A Goertzel filter per ITU-T Q.23 frequency on each 20 ms of the
 * caller's 8 kHz audio, the decision rules of Q.24's receiver, one DtmfDigit per press (when it
 * ends, as RFC 4733 reports them), and the tone's frames replaced by silence so the VAD and the
 * recogniser never take a key for speech.
 *
 * Why hand-written: Goertzel is the field's standard for DTMF receivers (Asterisk's dsp.c,
 * FreeSWITCH, spandsp all run one): eight second-order filters on 160 samples, no FFT, no model.
 * The call needs more than digits from it: which 20 ms frames held a tone, to silence them before
 * the VAD. Debian's libspandsp2 could be called through Deno's FFI (as pocketsphinx is), at the
 * cost of a native dependency and callbacks across FFI every 20 ms for this much arithmetic; npm's
 * dtmf-detection-stream is a Node stream that reports digits. Neither was measured against this
 * one (bench/media/dtmf.ts is where such a comparison would go).
 *
 * A frame hits a key when (Q.24's receiver requirements, with the limits receivers commonly quote
 * from its tables):
 * - frequency: the strongest tone of each group is nearer its Q.23 frequency than 3% (a receiver
 *   must operate at ±1.5% and not at ±3.5%): its best power at the nominal or 1.5% either side is
 *   at least its power 4.5% either side;
 * - level: each tone at least MIN_AMPLITUDE (about -30 dBm0);
 * - twist: the high group at most 4 dB above the low group, or at most 8 dB below it;
 * - purity: each group's tone 6 dB over the others of its group, and the two tones together at
 *   least 70% of the frame's power (speech spreads its power over harmonics and formants; this is
 *   the check that keeps talk-off low, measured by `deno task bench dtmf`).
 * Timing (Q.24: a tone of 40 ms is recognised, a pause of 40 ms separates two): windows of 20 ms
 * every 10 ms; a press starts at two hits of one key in a row (a tone of about 30 ms at least)
 * and ends at three windows without it (a pause of 40 ms gives four or more), so a window lost to
 * noise or a lost packet does not split a press.
 *
 * Muting: a frame is silenced when it hits, or when it looks like a tone pair without passing
 * every rule (the partial frames at a tone's edges), and the frame after a press ends. Frames
 * are replaced, not dropped, so the call's timeline, the VAD's pre-roll and the recording keep
 * their length. A press is at most one 20 ms partial frame ahead of its first mute.
 */
import type { DtmfDigit } from "./line.ts";

/** ITU-T Q.23: the low (row) and high (column) group frequencies, and the keys they make. */
export const LOW = [697, 770, 852, 941];
export const HIGH = [1209, 1336, 1477, 1633];
export const KEYPAD = ["123A", "456B", "789C", "*0#D"];

const RATE = 8000;
/** One frame: 20 ms at 8 kHz. */
export const TONE_FRAME = 160;
/** About -30 dBm0 per tone (0 dBm0 is a sine of amplitude 5,793 in 16-bit G.711 PCM). */
const MIN_AMPLITUDE = 180;
/** Twist limits in power ratios: high group up to 4 dB over low, low up to 8 dB over high. */
const MAX_HIGH_OVER_LOW = 10 ** (4 / 10);
const MAX_LOW_OVER_HIGH = 10 ** (8 / 10);
/** Each group's tone over the others of its group (6 dB, in power). */
const GROUP_MARGIN = 4;
/** The pair's share of the frame's power for a hit, and for a frame to be muted as tone-like. */
const HIT_SHARE = 0.7;
const MUTE_SHARE = 0.5;
/** Points either side of a nominal frequency: at Q.24's operate limit, and past it. */
const NEAR = 0.015, FAR = 0.045;
/** Windows (every 10 ms) of a key in a row that start a press, and without it that end one. */
const ON_WINDOWS = 2;
const OFF_WINDOWS = 3;

interface Goertzel {
  coeff: number;
}

const filter = (f: number): Goertzel => ({ coeff: 2 * Math.cos((2 * Math.PI * f) / RATE) });
const LOW_F = LOW.map(filter), HIGH_F = HIGH.map(filter);
const around = (fs: number[], d: number) =>
  fs.map((f) => [filter(f * (1 - d)), filter(f * (1 + d))]);
const LOW_NEAR = around(LOW, NEAR), HIGH_NEAR = around(HIGH, NEAR);
const LOW_FAR = around(LOW, FAR), HIGH_FAR = around(HIGH, FAR);

/** The Goertzel power |X|^2 of `x` at the filter's frequency (|X| = A n / 2 for a sine of amplitude A there). */
function power(g: Goertzel, x: Float32Array): number {
  let s1 = 0, s2 = 0;
  const c = g.coeff;
  for (let i = 0; i < x.length; i++) {
    const s = x[i] + c * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - c * s1 * s2;
}

const strongest = (ps: number[]) => ps.reduce((best, p, i) => (p > ps[best] ? i : best), 0);

/**
 * What one 20 ms frame holds: a key that passes every rule, tone-like audio, or neither.
 * `rules: "level_twist"` leaves out the purity and frequency rules: bench/media/dtmf.ts's
 * baseline, to show what they buy against talk-off.
 */
export function frameKey(
  x: Float32Array,
  rules: "q24" | "level_twist" = "q24",
): { key?: string; toneLike: boolean } {
  const n = x.length;
  let energy = 0;
  for (let i = 0; i < n; i++) energy += x[i] * x[i];
  const meanSquare = energy / n;
  const lows = LOW_F.map((g) => power(g, x)), highs = HIGH_F.map((g) => power(g, x));
  const r = strongest(lows), c = strongest(highs);
  // A tone off its nominal by up to 1.5% is measured where it is: the best of three points.
  const best = (p: number, gs: Goertzel[]) => Math.max(p, ...gs.map((g) => power(g, x)));
  const pr = best(lows[r], LOW_NEAR[r]), pc = best(highs[c], HIGH_NEAR[c]);
  const toAmp = (p: number) => (2 * Math.sqrt(p)) / n;
  const ar = toAmp(pr), ac = toAmp(pc);
  // The pair's power (A^2/2 each) as a share of the frame's.
  const share = meanSquare > 0 ? (ar * ar + ac * ac) / 2 / meanSquare : 0;
  const twistOk = pc <= pr * MAX_HIGH_OVER_LOW && pr <= pc * MAX_LOW_OVER_HIGH;
  const loud = ar >= MIN_AMPLITUDE && ac >= MIN_AMPLITUDE;
  const toneLike = share >= MUTE_SHARE && twistOk && ar >= MIN_AMPLITUDE / 2 &&
    ac >= MIN_AMPLITUDE / 2;
  if (!loud || !twistOk) return { toneLike };
  if (rules === "level_twist") return { key: KEYPAD[r][c], toneLike: true };
  if (share < HIT_SHARE) return { toneLike };
  const apart = (ps: number[], k: number, top: number) =>
    ps.every((p, i) => i === k || p * GROUP_MARGIN <= top);
  if (!apart(lows, r, pr) || !apart(highs, c, pc)) return { toneLike };
  // Nearer the nominal than 3% (between the 1.5% and 4.5% points): within Q.24's limits.
  if (best(0, LOW_FAR[r]) > pr || best(0, HIGH_FAR[c]) > pc) return { toneLike };
  return { key: KEYPAD[r][c], toneLike: true };
}

export interface DtmfToneStats {
  /** Keys reported. */
  digits: number;
  /** Frames silenced (tone, or tone-like at a tone's edges). */
  mutedFrames: number;
  frames: number;
}

/**
 * A line's in-band keys: `hear` takes each 16 kHz caller frame (320 samples, what every phone
 * line gives the call), returns it or a silent frame in its place, and calls `onDigit` once per
 * press, when it ends. Halving the rate by averaging pairs is the low-pass a 16 kHz frame
 * upsampled from 8 kHz G.711 needs: DTMF lies below 1.7 kHz.
 *
 * Each 20 ms frame is looked at twice, every 10 ms (the window straddling the last frame and this
 * one, then this one): a 40 ms tone, however it falls on the frames, fills two windows in a row.
 */
export class DtmfTones {
  readonly stats: DtmfToneStats = { digits: 0, mutedFrames: 0, frames: 0 };
  readonly #frame = new Float32Array(TONE_FRAME);
  readonly #window = new Float32Array(TONE_FRAME);
  #silence = new Int16Array(0);
  /** The key of the last windows' hits and how many in a row. */
  #key: string | undefined;
  #hits = 0;
  #misses = 0;
  /** The press under way (reported when it ends), and its windows. */
  #pressed: string | undefined;
  #pressWindows = 0;

  constructor(
    private readonly onDigit: (d: DtmfDigit) => void,
    private readonly rules: "q24" | "level_twist" = "q24",
  ) {}

  hear(pcm16k: Int16Array): Int16Array {
    const half = TONE_FRAME / 2, f = this.#frame, w = this.#window;
    // The window straddling frames: the last frame's second half, then this one's first.
    w.set(f.subarray(half));
    const n = Math.min(TONE_FRAME, pcm16k.length >> 1);
    for (let i = 0; i < n; i++) f[i] = (pcm16k[2 * i] + pcm16k[2 * i + 1]) / 2;
    f.fill(0, n);
    w.set(f.subarray(0, half), half);
    this.stats.frames++;
    const a = frameKey(w, this.rules), b = frameKey(f, this.rules);
    const tailA = this.#step(a.key), tailB = this.#step(b.key);
    const mute = a.toneLike || b.toneLike || tailA || tailB || this.#pressed !== undefined;
    if (!mute) return pcm16k;
    this.stats.mutedFrames++;
    if (this.#silence.length !== pcm16k.length) this.#silence = new Int16Array(pcm16k.length);
    return this.#silence;
  }

  /** The call ends: a press still sounding is reported. */
  close(): void {
    if (this.#pressed) this.#end();
  }

  /** One window's hit (or none); true while a press is ending (its tail is muted). */
  #step(key: string | undefined): boolean {
    if (key === undefined) this.#key = undefined;
    else if (key === this.#key) this.#hits++;
    else {
      this.#key = key;
      this.#hits = 1;
    }
    if (this.#pressed !== undefined) {
      if (key === this.#pressed) {
        this.#misses = 0;
        this.#pressWindows++;
        return false;
      }
      if (++this.#misses < OFF_WINDOWS && key === undefined) return true;
      this.#end();
      return true;
    }
    if (key !== undefined && this.#hits >= ON_WINDOWS) {
      this.#pressed = key;
      this.#pressWindows = this.#hits;
      this.#misses = 0;
    }
    return false;
  }

  #end(): void {
    const digit = this.#pressed!;
    this.#pressed = undefined;
    this.stats.digits++;
    // Windows every 10 ms, each 20 ms long: n windows span (n + 1) * 10 ms of tone.
    this.onDigit({ digit, durationMs: (this.#pressWindows + 1) * 10, via: "tone" });
  }
}
