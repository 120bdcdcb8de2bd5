// What the caller's voice says at a pause, besides the words: the pitch movement over the last
// voiced stretch (a fall ends a statement; a rise or a level pitch keeps the floor) and whether
// the last voiced segment was drawn out against this caller's own (phrase-final lengthening, or
// a held "andddd"). Fed the caller's 16 kHz frames; no clock but the audio's, no I/O.
//
// Pitch: pitchy's McLeod pitch method (a normalised autocorrelation, YIN's family) on 40 ms
// windows every 20 ms; its clarity is the voicing decision. Only 70-400 Hz counts, which G.711's
// 300-3400 Hz band keeps as harmonics: the autocorrelation finds the period from them, so the
// same track serves 8 kHz phone audio upsampled by the phone edge.
import { PitchDetector } from "pitchy";

export type PitchMove = "falling" | "rising" | "level" | "unknown";

export interface ProsodyCues {
  /** The pitch over the last ~300 ms of voiced audio before the pause. */
  pitch: PitchMove;
  /** Semitones from the start to the end of that stretch (negative: a fall). */
  semitones?: number;
  /** The pitch at the end against this caller's median of the last 3 s (negative: lower). */
  endSemitones?: number;
  /**
   * A statement's end: the pitch falls over the tail and ends low in this caller's range (both,
   * as a fall alone is also heard before a comma in a list).
   */
  finalFall: boolean;
  /**
   * The voice ended low in this caller's range and did not rise into its end (a declining level
   * end is a statement's too); a voice left at or above its middle, or rising, holds the floor.
   */
  lowEnd: boolean;
  /** A held word: a level pitch on a last segment half again as long as this caller's usual. */
  held: boolean;
  /** The last voiced segment's length over this caller's average segment (1: usual). */
  lengthening?: number;
}

const RATE = 16000;
const HOP = 320; // 20 ms
const WINDOW = 640; // 40 ms: two periods of a 70 Hz voice
const MIN_F0 = 70;
const MAX_F0 = 400;
/** Clarity (0-1) at which a window is voiced. */
const VOICED_CLARITY = 0.85;
/** Below this RMS (16-bit) a window is silence, whatever its clarity. */
const MIN_RMS = 200;
/** How much voiced audio the pitch movement is read from. */
const TAIL_MS = 300;
/** A movement of at least this many semitones is a fall or a rise. */
const MOVE_SEMITONES = 1.5;
/** The end of a final fall is this far below the caller's median pitch. */
const LOW_END_SEMITONES = 2;
/** A voice ending at least this far below the caller's median has ended low (lowEnd). */
const LOW_END_LEVEL = 1.75;
/** A last segment this much longer than the caller's average is drawn out. */
const HELD_RATIO = 1.5;
/** Hops kept (3 s): enough for the tail however the pause was reached. */
const KEEP = 150;

interface Hop {
  endMs: number;
  /** 0: unvoiced. */
  f0: number;
}

export class ProsodyTrack {
  readonly #detector = PitchDetector.forFloat32Array(WINDOW);
  readonly #window = new Float32Array(WINDOW);
  #pending = new Int16Array(0);
  #samples = 0;
  #hops: Hop[] = [];
  /** The voiced segment in progress (its hops), and the finished ones' average length. */
  #segmentHops = 0;
  #segments = 0;
  #segmentMeanMs = 0;

  /** One frame of 16 kHz audio, in order (any length). */
  push(frame: Int16Array): void {
    const joined = new Int16Array(this.#pending.length + frame.length);
    joined.set(this.#pending);
    joined.set(frame, this.#pending.length);
    let at = 0;
    for (; at + HOP <= joined.length; at += HOP) this.#hop(joined.subarray(at, at + HOP));
    this.#pending = joined.slice(at);
  }

  #hop(hop: Int16Array): void {
    // Slide the 40 ms window by one hop.
    this.#window.copyWithin(0, HOP);
    let energy = 0;
    for (let i = 0; i < HOP; i++) {
      const v = hop[i] / 32768;
      this.#window[WINDOW - HOP + i] = v;
      energy += hop[i] * hop[i];
    }
    this.#samples += HOP;
    const rms = Math.sqrt(energy / HOP);
    let f0 = 0;
    if (rms >= MIN_RMS) {
      const [pitch, clarity] = this.#detector.findPitch(this.#window, RATE);
      if (clarity >= VOICED_CLARITY && pitch >= MIN_F0 && pitch <= MAX_F0) f0 = pitch;
    }
    if (f0 > 0) this.#segmentHops++;
    else this.#closeSegment();
    this.#hops.push({ endMs: (this.#samples * 1000) / RATE, f0 });
    if (this.#hops.length > KEEP) this.#hops.shift();
  }

  #closeSegment(): void {
    if (this.#segmentHops === 0) return;
    const ms = this.#segmentHops * (HOP * 1000 / RATE);
    this.#segments++;
    this.#segmentMeanMs += (ms - this.#segmentMeanMs) / this.#segments;
    this.#segmentHops = 0;
  }

  /** The cues of the speech that ended at audio time `silenceStartMs` (the VAD's pause). */
  cuesAt(silenceStartMs: number): ProsodyCues {
    // Hops up to the silence (the VAD's frames and ours differ by up to a frame).
    const hops = this.#hops.filter((h) => h.endMs <= silenceStartMs + 40);
    let end = hops.length - 1;
    while (end >= 0 && hops[end].f0 === 0) end--;
    if (end < 0) return { pitch: "unknown", finalFall: false, lowEnd: false, held: false };
    // The last voiced segment, and the voiced hops of the tail (across short consonants).
    let start = end;
    while (start > 0 && hops[start - 1].f0 > 0) start--;
    const lastMs = (end - start + 1) * (HOP * 1000 / RATE);
    const tail = hops.filter((h) => h.f0 > 0 && h.endMs > hops[end].endMs - TAIL_MS - 200)
      .slice(-Math.round(TAIL_MS / 20));
    const mean = this.#segmentMeanMs;
    const lengthening = this.#segments >= 2 && mean > 0 ? round(lastMs / mean) : undefined;
    if (tail.length < 4) {
      return { pitch: "unknown", finalFall: false, lowEnd: false, held: false, lengthening };
    }
    const endF0 = median(tail.slice(-3));
    const semitones = 12 * Math.log2(endF0 / median(tail.slice(0, 3)));
    const endSemitones = round(12 * Math.log2(endF0 / median(hops.filter((h) => h.f0 > 0))));
    const pitch = semitones <= -MOVE_SEMITONES
      ? "falling"
      : semitones >= MOVE_SEMITONES
      ? "rising"
      : "level";
    return {
      pitch,
      semitones: round(semitones),
      endSemitones,
      finalFall: pitch === "falling" && endSemitones <= -LOW_END_SEMITONES,
      lowEnd: pitch !== "rising" && endSemitones <= -LOW_END_LEVEL,
      held: pitch === "level" && (lengthening ?? 0) >= HELD_RATIO,
      lengthening,
    };
  }
}

function median(hops: Hop[]): number {
  const f = hops.map((h) => h.f0).sort((a, b) => a - b);
  return f[Math.floor(f.length / 2)];
}

const round = (v: number) => Math.round(v * 10) / 10;
