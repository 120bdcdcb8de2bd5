// Answering machine detection for outbound calls (issue 34): who answered, a person or a machine,
// and, after a machine, when its beep is over. Pure, as media/turn/turn_taking.ts: it is fed the
// callee's audio and the VAD's per-frame speech probability, both on audio time since the answer,
// and answers with outcomes; no timers, no I/O, so every path is testable with recorded audio.
//
// Inputs, in audio time from the answer (ms):
// - `audio`: the callee's PCM in 20 ms frames (8 kHz by default; the worker's 16 kHz frames work
//   with sampleRate 16000). It drives the clock and the beep detector (beep.ts).
// - `vad`: one VAD frame (media/vad/voice_activity.ts's VadFrame: startMs, endMs, probability),
//   the Silero the worker already runs on the call's 16 kHz audio (phone audio is resampled to
//   16 kHz at the line's edge, media/phone/edge_audio.ts, before the VAD hears it). Silero scores a
//   steady tone near 0 (measured on the set's beeps: ≤ 0.06), so a beep never reads as speech.
//
// The decision (the field's heuristics, Asterisk app_amd's defaults where they fit):
// - speech is VAD frames at or above speechThreshold (staying speech down to keepThreshold); a
//   run shorter than minSpeechMs is ignored; a greeting is speech from its first onset whose gaps stay
//   under afterGreetingSilenceMs.
// - machine ("long_greeting"): the greeting has run machineSpeechMs (a machine talks long and
//   without a pause a person would leave for the answer).
// - human ("short_greeting"): a greeting of at most humanGreetingMaxMs then afterGreetingSilenceMs
//   of silence (a person says "hello?" and waits).
// - machine ("long_speech"): a greeting longer than that, a pause, and more speech, adding up to
//   machineSpeechMs (a recorded greeting that pauses between sentences; a person who said a whole
//   sentence has not paused for an answer and spoken on by then).
// - machine ("tone"): a beep (minMs of steady tone) before any decision, decided as soon as the
//   tone has lasted that long (a machine that only beeps, or one whose short greeting ended
//   before a person's silence would have; a fax or network tone: no person to talk to either way).
// - at ceilingMs, undecided: machine ("long_greeting_at_ceiling") while a greeting longer than
//   humanGreetingMaxMs is still going; otherwise human: "silence" (nothing said: a person who
//   waits for the caller to speak first is common, and a machine greeting that starts that late
//   hears the brain's words recorded, a smaller harm than hanging up on a person), "unsure" (a
//   greeting between the two lengths, or one that began too late to judge).
//
// After a machine: `beep` when a beep ends (its startMs, endMs; speak from endMs, when the
// machine records), or `no_beep` when none came: the greeting ended and noBeepSilenceMs of
// silence followed ("silence": a machine that records without a beep), or beepTimeoutMs passed
// since the decision ("timeout").
import { type Beep, BeepDetector, type BeepOptions } from "./beep.ts";

export interface MachineDetectionOptions {
  /** Undecided at this audio time (ms after answer), decide as above (default 4500). */
  ceilingMs?: number;
  /** A VAD frame at or above this is speech (default 0.5, the VAD's own). */
  speechThreshold?: number;
  /** While speaking, frames down to this stay speech (default 0.35, the VAD's own). */
  keepThreshold?: number;
  /** Speech shorter than this is a click or a breath, not a greeting's onset (default 100). */
  minSpeechMs?: number;
  /** A greeting that has run this long is a machine's (default 2500). */
  machineSpeechMs?: number;
  /** A greeting at most this long, then silence, is a person's (default 1500). */
  humanGreetingMaxMs?: number;
  /** Silence that ends a greeting (default 800, Asterisk's after_greeting_silence). */
  afterGreetingSilenceMs?: number;
  /** After a machine: silence this long after its greeting, with no beep, is no_beep (3000). */
  noBeepSilenceMs?: number;
  /** After a machine: no beep this long after the decision is no_beep (default 30000). */
  beepTimeoutMs?: number;
  /** Sample rate of the `audio` frames (default 8000). */
  sampleRate?: number;
  beep?: BeepOptions;
}

export const DEFAULT_MACHINE_DETECTION: Readonly<Required<Omit<MachineDetectionOptions, "beep">>> =
  Object.freeze({
    ceilingMs: 4500,
    speechThreshold: 0.5,
    keepThreshold: 0.35,
    minSpeechMs: 100,
    machineSpeechMs: 2500,
    humanGreetingMaxMs: 1500,
    afterGreetingSilenceMs: 1200,
    noBeepSilenceMs: 3000,
    beepTimeoutMs: 30000,
    sampleRate: 8000,
  });

export type AmdInput =
  | { type: "audio"; pcm: Int16Array }
  | { type: "vad"; startMs: number; endMs: number; probability: number };

export type AmdWhy =
  | "long_greeting"
  | "short_greeting"
  | "long_speech"
  | "tone"
  | "long_greeting_at_ceiling"
  | "silence"
  | "unsure";

export type AmdOutcome =
  /** Who answered, decided at atMs (audio time after the answer). */
  | { type: "decision"; decision: "human" | "machine"; atMs: number; why: AmdWhy }
  /** After a machine: its beep ended at atMs (= endMs). */
  | { type: "beep"; atMs: number; startMs: number; endMs: number; hz: number }
  /** After a machine: no beep is coming. */
  | { type: "no_beep"; atMs: number; why: "silence" | "timeout" };

export type AmdState = "listening" | "human" | "awaiting_beep" | "done";

/** A greeting: speech from its onset, its gaps under afterGreetingSilenceMs. */
interface Greeting {
  onsetMs: number;
  /** End of its last speech frame. */
  lastSpeechMs: number;
}

export class MachineDetection {
  state: AmdState = "listening";
  readonly options: Required<Omit<MachineDetectionOptions, "beep">>;
  readonly #beeps: BeepDetector;
  #clockMs = 0;
  /** Audio time the VAD has scored up to: silence is only counted that far (audio runs ahead). */
  #vadMs = 0;
  #decidedMs = 0;
  #speaking = false;
  /** Onset of the current speech run (not yet minSpeechMs long: not a greeting yet). */
  #runOnsetMs = 0;
  #greeting?: Greeting;
  /** Speech in greetings before the current one (each from its onset to its last speech). */
  #earlierMs = 0;

  constructor(options: MachineDetectionOptions = {}) {
    const { beep, ...rest } = options;
    this.options = { ...DEFAULT_MACHINE_DETECTION, ...rest };
    this.#beeps = new BeepDetector(this.options.sampleRate, beep);
  }

  /** Audio time seen so far (ms after the answer). */
  get clockMs(): number {
    return this.#clockMs;
  }

  handle(input: AmdInput): AmdOutcome[] {
    const out: AmdOutcome[] = [];
    if (this.state === "human" || this.state === "done") return out;
    if (input.type === "audio") this.#audio(input.pcm, out);
    else this.#vad(input.startMs, input.endMs, input.probability, out);
    return out;
  }

  #audio(pcm: Int16Array, out: AmdOutcome[]): void {
    const beep = this.#beeps.push(pcm);
    this.#clockMs = Math.max(this.#clockMs, this.#beeps.clockMs);
    if (beep) this.#onBeep(beep, out);
    this.#tick(out);
  }

  #onBeep(beep: Beep, out: AmdOutcome[]): void {
    // A tone ends a frame after it was confirmed at the earliest, so a decision is already made.
    if (this.state === "listening") this.#decide("machine", "tone", beep.endMs, out);
    if (this.state !== "awaiting_beep") return;
    out.push({ type: "beep", atMs: beep.endMs, ...beep });
    this.state = "done";
  }

  #vad(startMs: number, endMs: number, p: number, out: AmdOutcome[]): void {
    const o = this.options;
    const speech = p >= (this.#speaking ? o.keepThreshold : o.speechThreshold);
    if (speech && !this.#speaking) this.#runOnsetMs = startMs;
    this.#speaking = speech;
    if (speech && endMs - this.#runOnsetMs >= o.minSpeechMs) {
      const g = this.#greeting;
      if (g && this.#runOnsetMs - g.lastSpeechMs < o.afterGreetingSilenceMs) g.lastSpeechMs = endMs;
      else {
        if (g) this.#earlierMs += g.lastSpeechMs - g.onsetMs;
        this.#greeting = { onsetMs: this.#runOnsetMs, lastSpeechMs: endMs };
      }
    }
    this.#vadMs = Math.max(this.#vadMs, endMs);
    this.#clockMs = Math.max(this.#clockMs, endMs);
    this.#tick(out);
  }

  /** Decisions that depend on time alone, at the current clock. */
  #tick(out: AmdOutcome[]): void {
    const o = this.options, now = this.#clockMs, g = this.#greeting, heard = this.#vadMs;
    if (this.state === "listening") {
      if (this.#beeps.tone) {
        this.#decide("machine", "tone", now, out);
      } else if (g && g.lastSpeechMs - g.onsetMs >= o.machineSpeechMs) {
        this.#decide("machine", "long_greeting", now, out);
      } else if (g && this.#earlierMs + g.lastSpeechMs - g.onsetMs >= o.machineSpeechMs) {
        this.#decide("machine", "long_speech", now, out);
      } else if (
        g && heard - g.lastSpeechMs >= o.afterGreetingSilenceMs &&
        g.lastSpeechMs - g.onsetMs <= o.humanGreetingMaxMs
      ) {
        this.#decide("human", "short_greeting", now, out);
      } else if (now >= o.ceilingMs) {
        const going = g !== undefined && now - g.lastSpeechMs < o.afterGreetingSilenceMs;
        if (going && g.lastSpeechMs - g.onsetMs > o.humanGreetingMaxMs) {
          this.#decide("machine", "long_greeting_at_ceiling", now, out);
        } else this.#decide("human", g ? "unsure" : "silence", now, out);
      }
      return;
    }
    if (this.state !== "awaiting_beep") return;
    // A tone in progress may be the beep: wait for it to end before giving up on one.
    if (this.#beeps.runStartMs !== undefined) return;
    const quietSince = Math.max(g?.lastSpeechMs ?? 0, this.#decidedMs);
    if (heard - quietSince >= o.noBeepSilenceMs) this.#noBeep("silence", now, out);
    else if (now - this.#decidedMs >= o.beepTimeoutMs) this.#noBeep("timeout", now, out);
  }

  #decide(decision: "human" | "machine", why: AmdWhy, atMs: number, out: AmdOutcome[]): void {
    out.push({ type: "decision", decision, atMs, why });
    this.#decidedMs = atMs;
    this.state = decision === "human" ? "human" : "awaiting_beep";
  }

  #noBeep(why: "silence" | "timeout", atMs: number, out: AmdOutcome[]): void {
    out.push({ type: "no_beep", atMs, why });
    this.state = "done";
  }
}
