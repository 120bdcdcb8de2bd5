// What a caller on hold hears during a warm transfer: a soft two-note chime made here (no file,
// nothing downloaded), 440 Hz then 554 Hz for 0.4 s each with 20 ms fades, every 2 s, at about
// -22 dBFS peak. Pure tones, so a test (and an ear) tells it from speech; and while it plays the
// caller's audio does not reach the conversation at all (SipLine.hold), so neither the chime's
// echo nor anything else on the line is taken for the caller's speech.
import type { FrameSource } from "../audio/frame_source.ts";

const RATE = 48_000;
const FRAME = 960;
/** The notes, their length and the pattern's period, in samples at 48 kHz. */
export const HOLD_NOTES_HZ = [440, 554] as const;
const NOTE = 0.4 * RATE;
const GAP = 0.1 * RATE;
const PERIOD = 2 * RATE;
const FADE = 0.02 * RATE;
const PEAK = 2_600;

/** One period of the pattern, made once for every call. */
const PATTERN = (() => {
  const out = new Int16Array(PERIOD);
  HOLD_NOTES_HZ.forEach((hz, n) => {
    const start = n * (NOTE + GAP);
    for (let i = 0; i < NOTE; i++) {
      const fade = Math.min(1, i / FADE, (NOTE - 1 - i) / FADE);
      out[start + i] = Math.round(PEAK * fade * Math.sin(2 * Math.PI * hz * i / RATE));
    }
  });
  return out;
})();

/** The hold chime as a FrameSource, from the start of its pattern. */
export class HoldAudio implements FrameSource {
  #at = 0;
  readonly #frame = new Int16Array(FRAME);

  next(): Int16Array {
    for (let i = 0; i < FRAME; i++) this.#frame[i] = PATTERN[(this.#at + i) % PERIOD];
    this.#at = (this.#at + FRAME) % PERIOD;
    return this.#frame;
  }
}
