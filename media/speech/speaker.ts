// The bot's voice on one call: units are synthesized as they arrive and played in order, one
// 20 ms frame per outbound tick. It knows exactly how much of each unit went out, so a cut-off
// (barge-in) stops at the next frame and reports what the caller heard.
//
// Bounded per call, whatever the brain sends: at most `maxUnits` units and `maxChars` characters
// wait or play (a unit beyond is refused: enqueue() says so), and only the playing unit and the
// `synthesisAhead` after it are being synthesized, so one call never holds more than a few units
// of audio nor puts more than that many jobs in front of other calls at a shared engine.
//
// It can pause (a caller's "yeah" or "haan" over the bot): paused, it gives no frames (the call
// sends silence) and keeps its place to the frame, so resume() goes on with the very next sample
// and the unit's heard text counts only the audio really sent. The place is a whole frame because
// the speaker only ever hands out whole frames.
//
// It can hold a turn (a speculative turn's reply, media/turn/speculative.ts): its units are
// queued and synthesized as any, within the same bounds, but give no frame until release(); a
// discarded turn goes without a trace (nothing of it was heard, so no unit is reported done).
import { FRAME_SAMPLES_48K } from "../../wasm/opus.ts";
import type { FrameSource } from "../audio/frame_source.ts";
import { heardText, type WordTiming } from "./heard.ts";

/** Synthesized audio of a unit: 48 kHz mono PCM, with the words it contains. */
export interface SpeechChunk {
  pcm: Int16Array;
  words: WordTiming[];
  /** The engine that made it (the router says), for the record and usage. */
  engine?: string;
}

export type Synthesize = (text: string, signal: AbortSignal) => AsyncIterable<SpeechChunk>;

export interface SpokenUnit {
  turnId: string;
  unitId: string;
  text: string;
}

export interface UnitHeard extends SpokenUnit {
  heard: string;
  cutOff: boolean;
  /** The engine that synthesized the unit; undefined when it was cut before any audio came. */
  engine?: string;
  /**
   * The heard text of a cut unit rests on estimated word timings (the engine gave none), or on
   * none yet: it is the audio really sent, mapped to words by their share of the unit.
   */
  estimated: boolean;
}

export interface SpeakerEvents {
  /** The first frame of a turn's reply went out (the bot started speaking). */
  onTurnAudioStarted?(turnId: string): void;
  /** The first frame of a unit went out. */
  onUnitStarted?(unit: SpokenUnit): void;
  /** A word of the playing unit finished: `heard` is the unit's heard text so far. */
  onProgress?(unit: SpokenUnit, heard: string): void;
  /** A unit is done: played out, or cut off (heard is what went out before the cut). */
  onUnitDone?(unit: UnitHeard): void;
  /** The last unit of a turn played out. */
  onTurnFinished?(turnId: string): void;
  /** Nothing is left to play: the bot stopped speaking. */
  onIdle?(): void;
  /** A held turn's first audio was synthesized (it may still be held). */
  onTurnAudioReady?(turnId: string): void;
  /** Synthesis of a unit failed; `gotAudio` says whether some of its audio had come. */
  onSynthesisError?(unit: SpokenUnit, err: Error, gotAudio: boolean): void;
}

export interface SpeakerLimits {
  /** Units waiting or playing. */
  maxUnits: number;
  /** Characters of those units. */
  maxChars: number;
  /** Units synthesized ahead of the one playing. */
  synthesisAhead: number;
}

export const DEFAULT_SPEAKER_LIMITS: Readonly<SpeakerLimits> = Object.freeze({
  maxUnits: 64,
  maxChars: 4000,
  synthesisAhead: 2,
});

class Playback {
  frames: Int16Array[] = [];
  partial = new Int16Array(FRAME_SAMPLES_48K);
  partialLength = 0;
  words: WordTiming[] = [];
  synthDone = false;
  /** Synthesis was asked for (units far back in the queue wait as text). */
  synthStarted = false;
  /** Synthesis failed: what played is what was heard, and the unit counts as cut. */
  synthFailed = false;
  gotAudio = false;
  started = false;
  playedFrames = 0;
  heardSoFar = "";
  engine?: string;
  abort = new AbortController();
  constructor(readonly unit: SpokenUnit, readonly last: boolean) {}

  get playedMs(): number {
    return this.playedFrames * 20;
  }

  add(pcm: Int16Array): void {
    let i = 0;
    while (i < pcm.length) {
      const n = Math.min(FRAME_SAMPLES_48K - this.partialLength, pcm.length - i);
      this.partial.set(pcm.subarray(i, i + n), this.partialLength);
      this.partialLength += n;
      i += n;
      if (this.partialLength === FRAME_SAMPLES_48K) {
        this.frames.push(this.partial);
        this.partial = new Int16Array(FRAME_SAMPLES_48K);
        this.partialLength = 0;
      }
    }
  }

  finishSynthesis(): void {
    // The tail is padded with silence to a whole frame.
    if (this.partialLength > 0) this.frames.push(this.partial);
    this.partialLength = 0;
    this.synthDone = true;
  }
}

export class Speaker implements FrameSource {
  private queue: Playback[] = [];
  private queuedChars = 0;
  private limits: SpeakerLimits;
  /** Turns whose last unit has been queued. */
  private closedTurns = new Set<string>();
  private audioStartedTurns = new Set<string>();
  /** Frames that carried the bot's voice. */
  voicedFrames = 0;
  /** When the current pause began (the caller's clock), or undefined when not paused. */
  private pausedAt: number | undefined;
  /** Turns held, or held once: released yet, and whether their first audio is in. */
  private held = new Map<string, { released: boolean; ready: boolean }>();

  constructor(
    private synthesize: Synthesize,
    private events: SpeakerEvents = {},
    limits: Partial<SpeakerLimits> = {},
  ) {
    this.limits = { ...DEFAULT_SPEAKER_LIMITS, ...limits };
  }

  /** Whether anything is playing or waiting to play. */
  get busy(): boolean {
    return this.queue.length > 0;
  }

  /** Audio is synthesized and waiting for the next frame pulled (a call prepared while ringing). */
  get audioWaiting(): boolean {
    return !this.paused && !this.holding && (this.queue[0]?.frames.length ?? 0) > 0;
  }

  /** The unit at the head of the queue belongs to a held turn: nothing plays. */
  private get holding(): boolean {
    const head = this.queue[0];
    return head !== undefined && this.held.get(head.unit.turnId)?.released === false;
  }

  /** The units of `turnId`, queued from now on, are synthesized but not played until release(). */
  hold(turnId: string): void {
    this.held.set(turnId, { released: false, ready: false });
  }

  /**
   * The held turn plays from the next frame; a turn whose (empty) last unit came while it was
   * held, with nothing left to play, finishes now.
   */
  release(turnId: string): void {
    const h = this.held.get(turnId);
    if (!h || h.released) return;
    h.released = true;
    if (this.closedTurns.has(turnId) && !this.paused) {
      if (!this.queue.some((p) => p.unit.turnId === turnId)) this.finishTurn(turnId);
    }
  }

  /** The held turn is dropped unheard: its units go, synthesis stops, nothing is reported. */
  discard(turnId: string): void {
    if (!this.held.delete(turnId)) return;
    const wasBusy = this.queue.length > 0;
    this.queue = this.queue.filter((p) => {
      if (p.unit.turnId !== turnId) return true;
      p.abort.abort();
      this.queuedChars -= p.unit.text.length;
      return false;
    });
    this.closedTurns.delete(turnId);
    this.startSynthesis();
    if (wasBusy && this.queue.length === 0) this.events.onIdle?.();
  }

  /** Units waiting or playing, and their characters. */
  get queued(): { units: number; chars: number } {
    return { units: this.queue.length, chars: this.queuedChars };
  }

  /** Whether the speaker is paused: it gives no frames and holds its place. */
  get paused(): boolean {
    return this.pausedAt !== undefined;
  }

  /**
   * Stops giving frames from the next one on, holding the exact place in the playing unit (or,
   * in a gap where synthesis has not caught up, before the unit's next frame). Synthesis of the
   * queued units goes on within the usual bounds; no unit or turn finishes while paused. Returns
   * true when this call paused the speaker: false when it was already paused (the first pause's
   * start is kept) or had nothing to play and no `turnId` was given (idle stays unpaused).
   *
   * `turnId`: the reply the caller speaks over. The pause then holds even with nothing queued:
   * a brain's next unit that comes after the last one played out (a streamed reply running
   * behind, a busy host) waits for resume() instead of playing over the caller.
   */
  pause(now: number = performance.now(), turnId?: string): boolean {
    if (this.paused || (this.queue.length === 0 && turnId === undefined)) return false;
    this.pausedAt = now;
    return true;
  }

  /**
   * Goes on from the very sample where the pause stopped. Returns false when not paused. A turn
   * whose empty last unit came during the pause, with nothing of it left to play, finishes now.
   */
  resume(): boolean {
    if (!this.paused) return false;
    this.endPause();
    return true;
  }

  /** How long the current pause has lasted, in ms of the clock given to pause(); 0 unpaused. */
  pausedMs(now: number = performance.now()): number {
    return this.pausedAt === undefined ? 0 : Math.max(0, now - this.pausedAt);
  }

  private endPause(): void {
    this.pausedAt = undefined;
    for (const turnId of [...this.closedTurns]) {
      if (this.held.get(turnId)?.released === false) continue;
      if (!this.queue.some((p) => p.unit.turnId === turnId)) this.finishTurn(turnId);
    }
  }

  /** Units whose synthesis is running or done and whose audio is not all played. */
  get synthesizing(): number {
    return this.queue.filter((p) => p.synthStarted).length;
  }

  /**
   * Queues a unit; its synthesis starts once it is near enough the head of the queue. Returns
   * false when the unit is refused: the queue is full (a refused last unit still ends its turn).
   */
  enqueue(unit: SpokenUnit, last: boolean): boolean {
    if (unit.text.trim() === "") {
      if (last) this.closeTurn(unit.turnId);
      return true;
    }
    if (
      this.queue.length >= this.limits.maxUnits ||
      this.queuedChars + unit.text.length > this.limits.maxChars
    ) {
      if (last) this.closeTurn(unit.turnId);
      return false;
    }
    const p = new Playback(unit, last);
    this.queue.push(p);
    this.queuedChars += unit.text.length;
    this.startSynthesis();
    return true;
  }

  /** Starts synthesis of the units within reach of the head of the queue. */
  private startSynthesis(): void {
    const reach = Math.min(this.queue.length, 1 + this.limits.synthesisAhead);
    for (let i = 0; i < reach; i++) {
      const p = this.queue[i];
      if (p.synthStarted) continue;
      p.synthStarted = true;
      this.run(p);
    }
  }

  private async run(p: Playback): Promise<void> {
    try {
      for await (const chunk of this.synthesize(p.unit.text, p.abort.signal)) {
        if (p.abort.signal.aborted) return;
        // The router counts the unit's characters for its engine (the call's usage).
        if (chunk.engine && !p.engine) p.engine = chunk.engine;
        p.words.push(...chunk.words);
        if (chunk.pcm.length) p.gotAudio = true;
        const h = this.held.get(p.unit.turnId);
        if (h && !h.ready && chunk.pcm.length) {
          h.ready = true;
          this.events.onTurnAudioReady?.(p.unit.turnId);
        }
        p.add(chunk.pcm);
      }
    } catch (err) {
      if (!p.abort.signal.aborted) {
        p.synthFailed = true;
        this.events.onSynthesisError?.(p.unit, err as Error, p.gotAudio);
      }
    }
    p.finishSynthesis();
  }

  private closeTurn(turnId: string): void {
    this.closedTurns.add(turnId);
    // A turn whose units all played before its (empty) last unit came is finished now (or on
    // resume: nothing finishes while paused).
    if (this.held.get(turnId)?.released === false) return; // on release
    if (!this.paused && !this.queue.some((p) => p.unit.turnId === turnId)) {
      this.finishTurn(turnId);
    }
  }

  private finishTurn(turnId: string): void {
    this.closedTurns.delete(turnId);
    this.audioStartedTurns.delete(turnId);
    this.held.delete(turnId);
    this.events.onTurnFinished?.(turnId);
  }

  /** The next 20 ms of the bot's voice, or undefined for silence. Called on the pacer's grid. */
  next(): Int16Array | undefined {
    // Paused: nothing is taken from the unit, so its place, heard text and progress stand still.
    // Held: the same, for a speculative turn's reply not yet confirmed.
    if (this.paused || this.holding) return undefined;
    const p = this.queue[0];
    if (!p) return undefined;
    const frame = p.frames.shift();
    if (!frame) {
      if (p.synthDone) {
        this.complete(p);
        return this.next();
      }
      return undefined; // synthesis has not caught up: a gap of silence, not counted as heard
    }
    if (!p.started) {
      p.started = true;
      if (!this.audioStartedTurns.has(p.unit.turnId)) {
        this.audioStartedTurns.add(p.unit.turnId);
        this.events.onTurnAudioStarted?.(p.unit.turnId);
      }
      this.events.onUnitStarted?.(p.unit);
    }
    p.playedFrames++;
    this.voicedFrames++;
    const heard = heardText(p.unit.text, p.words, p.playedMs);
    if (heard !== p.heardSoFar) {
      p.heardSoFar = heard;
      this.events.onProgress?.(p.unit, heard);
    }
    if (p.synthDone && p.frames.length === 0) this.complete(p);
    return frame;
  }

  private complete(p: Playback): void {
    this.queue.shift();
    this.queuedChars -= p.unit.text.length;
    this.startSynthesis();
    // A unit whose synthesis failed was heard up to where its audio stopped.
    this.events.onUnitDone?.(
      p.synthFailed ? this.heardOf(p) : {
        ...p.unit,
        heard: p.unit.text,
        cutOff: false,
        engine: p.engine,
        estimated: false,
      },
    );
    if (p.last) this.closeTurn(p.unit.turnId);
    else if (
      this.closedTurns.has(p.unit.turnId) &&
      !this.queue.some((q) => q.unit.turnId === p.unit.turnId)
    ) {
      this.finishTurn(p.unit.turnId);
    }
    if (this.queue.length === 0) this.events.onIdle?.();
  }

  /**
   * Barge-in: stops everything of `turnId` (or everything) before the next frame. Returns what
   * was heard of each unit it stopped, the playing one and the ones never started. Paused, the
   * heard text is what went out before the pause; a cut that leaves nothing to play ends the
   * pause (there is no place left to hold), before onIdle.
   */
  cutOff(turnId?: string): UnitHeard[] {
    const stopped: UnitHeard[] = [];
    const keep: Playback[] = [];
    for (const p of this.queue) {
      if (turnId !== undefined && p.unit.turnId !== turnId) {
        keep.push(p);
        continue;
      }
      p.abort.abort();
      this.queuedChars -= p.unit.text.length;
      // A held turn's units were never heard, not even cut: they go without a report.
      if (this.held.get(p.unit.turnId)?.released === false) continue;
      const done = this.heardOf(p);
      stopped.push(done);
      this.events.onUnitDone?.(done);
    }
    const wasBusy = this.queue.length > 0;
    this.queue = keep;
    this.startSynthesis();
    if (turnId === undefined) this.closedTurns.clear();
    else this.closedTurns.delete(turnId);
    if (turnId === undefined) this.held.clear();
    else this.held.delete(turnId);
    if (this.paused && keep.length === 0) this.endPause();
    if (wasBusy && keep.length === 0) this.events.onIdle?.();
    return stopped;
  }

  /** A unit stopped short: the words whose audio went out in full. */
  private heardOf(p: Playback): UnitHeard {
    const heard = heardText(p.unit.text, p.words, p.playedMs);
    const estimated = p.playedFrames > 0 &&
      (p.words.length === 0 || p.words.some((w) => w.estimated));
    return { ...p.unit, heard, cutOff: true, engine: p.engine, estimated };
  }
}
