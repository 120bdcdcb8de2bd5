// End of the caller's speech to the bot's first audio, measured where the caller hears it: from
// the audio the caller sent and the audio it received, never from messages (a bot-output or
// bot-started-speaking can come before or after the sound). Two forms:
//   - FrameTimes: a log of sent and received frames with their times, queried per scripted turn
//     (the caller simulator and the benchmarks know when each turn was said);
//   - TurnLatencyDetector: a streaming detector fed energy samples, for a page that knows no
//     script (web/call uses it with WebAudio on its microphone and the received bot track).
// Nothing here reads a clock or touches audio devices, so tests feed it synthetic frames.

/** A sent sample louder than this (|x|, 16-bit) is caller speech (as caller/script.ts's speechEndMs). */
export const SPEECH_LEVEL = 500;
/** A received 20 ms frame louder than this (RMS, 16-bit) is bot audio. */
export const BOT_LEVEL = 300;

/** One frame the caller sent: when its first sample went out, and where its voice ends. */
export interface SentFrame {
  at: number;
  /** When the frame's last voiced sample went out (at + its offset), null when the frame is quiet. */
  voicedUntil: number | null;
}

/** One frame the caller received: when it arrived and how loud it was. */
export interface HeardFrame {
  at: number;
  rms: number;
}

/** The end (ms from the start of `pcm`) of its last sample louder than `level`; null when quiet. */
export function lastVoicedMs(pcm: Int16Array, level = SPEECH_LEVEL, rate = 48000): number | null {
  for (let i = pcm.length - 1; i >= 0; i--) {
    if (pcm[i] > level || pcm[i] < -level) return ((i + 1) * 1000) / rate;
  }
  return null;
}

/** One turn's figure: the caller's end of speech, the first bot audio after it, and the gap. */
export interface TurnLatency {
  speech_end: number | null;
  first_audio: number | null;
  /** first_audio − speech_end, rounded to 0.1 ms; null when either is missing. */
  ms: number | null;
}

/** Index of the first element whose `at` is ≥ `t` (the frames are in time order). */
function lowerBound(frames: readonly { at: number }[], t: number): number {
  let lo = 0, hi = frames.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid].at < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Sent and received frames of one call, in time order, and per-turn queries over them. */
export class FrameTimes {
  readonly sent: SentFrame[] = [];
  readonly heard: HeardFrame[] = [];

  constructor(readonly speechLevel = SPEECH_LEVEL, readonly botLevel = BOT_LEVEL) {}

  /** A frame went out at `at` (when its first sample did); `pcm` at `rate`. */
  addSent(at: number, pcm: Int16Array, rate = 48000): void {
    const v = lastVoicedMs(pcm, this.speechLevel, rate);
    this.sent.push({ at, voicedUntil: v === null ? null : at + v });
  }

  addHeard(at: number, rms: number): void {
    this.heard.push({ at, rms });
  }

  /** The end of the last voiced sample sent from `from` up to (not including) `to`; null if none. */
  speechEnd(from: number, to = Infinity): number | null {
    const start = lowerBound(this.sent, from);
    for (let i = lowerBound(this.sent, to) - 1; i >= start; i--) {
      const v = this.sent[i].voicedUntil;
      if (v !== null) return v;
    }
    return null;
  }

  /**
   * When sample `sample` (counted from 1) of audio whose first frame went out at `from` or later
   * was sent: the sent time of the frame that carried it plus its offset in that frame. Frames
   * of one utterance go out one per pacer tick, so the k-th frame from `from` carried samples
   * k·frame … (k+1)·frame. Null when that frame was not sent (yet).
   */
  sampleSentAt(from: number, sample: number, frame = 960, rate = 48000): number | null {
    if (sample <= 0) return null;
    const k = Math.floor((sample - 1) / frame);
    const f = this.sent[lowerBound(this.sent, from) + k];
    return f ? f.at + ((sample - k * frame) * 1000) / rate : null;
  }

  /** The arrival of the first received frame louder than the bot level at `after` or later. */
  firstAudio(after: number, until = Infinity): number | null {
    for (let i = lowerBound(this.heard, after); i < this.heard.length; i++) {
      const f = this.heard[i];
      if (f.at >= until) break;
      if (f.rms > this.botLevel) return f.at;
    }
    return null;
  }

  /** A turn said between `from` and `to`: its end of speech and the first bot audio after it. */
  measure(from: number, to = Infinity): TurnLatency {
    const speech_end = this.speechEnd(from, to);
    const first_audio = speech_end === null ? null : this.firstAudio(speech_end);
    return {
      speech_end,
      first_audio,
      ms: speech_end === null || first_audio === null
        ? null
        : Math.round((first_audio - speech_end) * 10) / 10,
    };
  }
}

/** The `p`th percentile (nearest rank) of `xs`; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

export interface LatencySummary {
  /** Turns with a figure, and turns without one (no speech sent or no bot audio heard). */
  n: number;
  missing: number;
  p50: number | null;
  p99: number | null;
  /** The first turn's figure, and the median of the later turns (the first turn costs more). */
  first: number | null;
  later_p50: number | null;
}

/** p50/p99 over the turns, and the first turn against the later ones. */
export function summarise(perTurn: readonly (number | null)[]): LatencySummary {
  const got = perTurn.filter((x): x is number => x !== null);
  const later = perTurn.slice(1).filter((x): x is number => x !== null);
  const or = (x: number) => Number.isNaN(x) ? null : x;
  return {
    n: got.length,
    missing: perTurn.length - got.length,
    p50: or(percentile(got, 50)),
    p99: or(percentile(got, 99)),
    first: perTurn[0] ?? null,
    later_p50: or(percentile(later, 50)),
  };
}

export interface DetectorOptions {
  /** Quiet after the caller's last voiced sample that ends the utterance (default 300 ms). */
  hangoverMs?: number;
  /** Shorter utterances (a click, a cough) are not turns (default 150 ms). */
  minSpeechMs?: number;
  /**
   * The bot must have been quiet this long at the caller's end of speech, so that the caller
   * talking over the bot's own speech (or a gap between its words) is not taken for a reply.
   */
  botQuietMs?: number;
  /** No bot audio this long after the end of speech: no figure for that utterance. */
  maxWaitMs?: number;
}

export interface DetectedTurn {
  /** When the caller's speech began and ended, and when the bot's audio began after it. */
  speech_start: number;
  speech_end: number;
  first_audio: number;
  ms: number;
}

/**
 * Streaming: energy samples of the caller's own microphone and of the bot's received audio, in
 * time order (each with its time), and a figure per utterance that the bot answered. The end of
 * speech is the last voiced sample once `hangoverMs` of quiet confirm it; the bot's first audio
 * may come before the confirmation (a fast reply), and counts if the caller stays quiet.
 */
export class TurnLatencyDetector {
  readonly turns: DetectedTurn[] = [];
  #o: Required<DetectorOptions>;
  #start: number | null = null;
  #lastVoiced: number | null = null;
  /** The utterance is over (confirmed) and waits for bot audio. */
  #ended = false;
  /** The first bot audio after the last voiced sample, seen before the end was confirmed. */
  #candidate: number | null = null;
  /** The bot was loud across the end of speech: no figure for this utterance. */
  #spoilt = false;
  #botLoudAt = -Infinity;

  constructor(options: DetectorOptions = {}, readonly onTurn?: (t: DetectedTurn) => void) {
    this.#o = {
      hangoverMs: options.hangoverMs ?? 300,
      minSpeechMs: options.minSpeechMs ?? 150,
      botQuietMs: options.botQuietMs ?? 200,
      maxWaitMs: options.maxWaitMs ?? 10_000,
    };
  }

  /** A sample of the caller's microphone at `t`: voiced (above the speech threshold) or not. */
  caller(t: number, voiced: boolean): void {
    const last = this.#lastVoiced;
    if (voiced) {
      // A new utterance after a finished one (or the first): its own start.
      if (last === null || this.#ended || t - last >= this.#o.hangoverMs) this.#start = t;
      this.#lastVoiced = t;
      this.#ended = false;
      this.#candidate = null;
      this.#spoilt = false;
      return;
    }
    if (last === null || this.#ended || t - last < this.#o.hangoverMs) return;
    if (last - this.#start! < this.#o.minSpeechMs || this.#spoilt) return this.#reset();
    this.#ended = true;
    if (this.#candidate !== null) this.#emit(this.#candidate);
  }

  /** A sample of the bot's received audio at `t`: loud (above the bot threshold) or not. */
  bot(t: number, loud: boolean): void {
    const last = this.#lastVoiced;
    if (!loud) {
      if (this.#ended && last !== null && t - last > this.#o.maxWaitMs) this.#reset();
      return;
    }
    const before = this.#botLoudAt;
    this.#botLoudAt = t;
    if (last === null || t < last || this.#candidate !== null || this.#spoilt) return;
    if (before > last - this.#o.botQuietMs) {
      // The bot was speaking at (or just before) the end of speech: not a reply to it.
      this.#spoilt = true;
      if (this.#ended) this.#reset();
      return;
    }
    if (this.#ended) this.#emit(t);
    else this.#candidate = t;
  }

  #emit(at: number): void {
    const turn: DetectedTurn = {
      speech_start: this.#start!,
      speech_end: this.#lastVoiced!,
      first_audio: at,
      ms: Math.round((at - this.#lastVoiced!) * 10) / 10,
    };
    this.#reset();
    this.turns.push(turn);
    this.onTurn?.(turn);
  }

  #reset(): void {
    this.#start = null;
    this.#lastVoiced = null;
    this.#ended = false;
    this.#candidate = null;
    this.#spoilt = false;
  }
}
