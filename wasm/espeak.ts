/**
 * eSpeak NG through emscripten (@echogarden/espeak-ng-emscripten, stack-notes §6): one module per
 * thread, a voice, and text → 22,050 Hz mono Int16 with espeak's events, chunk by chunk.
 *
 * The package is emscripten's wasm2js output (`isWasm2js: true`): espeak's C as asm.js-style
 * JavaScript over typed-array heaps, not a WebAssembly module. V8 tiers its huge functions up by
 * on-stack replacement and drops that code when a loop exits, so a thread reaches its steady
 * state (~0.4 % of realtime) only after tens of seconds of speech; before that a unit costs up to
 * 7 times as much (bench/media/README.md, "Steady state"). The npm registry has no espeak-ng
 * WASM build with the library API (word events); a build of our own is the way to real WASM.
 *
 * Synthesis is synchronous (a 12 s paragraph: ~55 ms warm, up to ~250 ms cold): call it from a
 * Worker thread, not from a thread that paces audio. espeak calls back once per ~100 ms of audio (2,206 samples), so a
 * caller can forward audio long before the text is fully spoken, and stop it by returning true.
 *
 * This build always parses its input as SSML (a bare `<` silences the rest of the text), so
 * `synthesize()` escapes plain text first. espeak reports text positions as 1-based code point
 * offsets into what it was given; here they come back as UTF-16 offsets into the caller's own
 * string (the unescaped text), which is what `String.prototype.slice` wants.
 */

import EspeakFactory from "@echogarden/espeak-ng-emscripten";

/** espeak's fixed output rate. */
export const ESPEAK_SAMPLE_RATE = 22050;

export interface EspeakEvent {
  /** "word", "sentence", "phoneme", "end" (clause end), "mark", "samplerate", ... */
  type: string;
  /** UTF-16 offset into the text passed in; -1 when the event has no text position. */
  charIndex: number;
  /** espeak's own word length in code points; rough (it says 3 for "isn't"). */
  length: number;
  /** Where the event falls in the audio, in ms from the start of this synthesis. */
  audioMs: number;
  /** word/sentence: running number; phoneme: the IPA phone ("" for a pause); mark: its name. */
  id?: string | number;
}

export interface EspeakVoice {
  name: string;
  identifier: string;
  languages: { priority: number; name: string }[];
}

/** What one `synthesize` call produced. */
export interface EspeakResult {
  samples: number;
  /** The callback asked to stop before espeak finished. */
  stopped: boolean;
}

/** Returns true to stop synthesis after this chunk. */
export type EspeakChunkHandler = (pcm: Int16Array, events: EspeakEvent[]) => boolean | void;

export class EspeakError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EspeakError";
  }
}

interface RawEvent {
  type: string;
  text_position: number;
  word_length: number;
  audio_position: number;
  id?: string | number;
}

interface RawWorker {
  set_voice(name: string): number;
  get_samplerate(): number;
  list_voices(): EspeakVoice[];
  synthesize(text: string, cb: (pcm: Int16Array, events: RawEvent[]) => boolean): void;
}

let loading: Promise<Espeak> | null = null;

export class Espeak {
  #w: RawWorker;
  #voice = "";
  #busy = false;

  private constructor(w: RawWorker) {
    this.#w = w;
  }

  /** The thread's one espeak (the C library is a singleton); loads ~24 MB of voice data once. */
  static load(): Promise<Espeak> {
    loading ??= (async () => {
      const m = await EspeakFactory();
      const e = new Espeak(new m.eSpeakNGWorker() as RawWorker);
      const rate = e.#w.get_samplerate();
      if (rate !== ESPEAK_SAMPLE_RATE) throw new EspeakError(`unexpected espeak rate ${rate}`);
      return e;
    })().catch((err) => {
      loading = null; // a later call may retry
      throw err;
    });
    return loading;
  }

  /** 22,050 Hz (checked at load). */
  readonly sampleRate = ESPEAK_SAMPLE_RATE;

  /** The voices in the data files (140 in 0.3.5). */
  voices(): EspeakVoice[] {
    return this.#w.list_voices();
  }

  /** A voice by language/identifier, optionally with a variant: "hi", "en-us+f3". */
  setVoice(name: string): void {
    if (name === this.#voice) return;
    const code = this.#w.set_voice(name);
    if (code !== 0) throw new EspeakError(`espeak has no voice "${name}" (code ${code})`);
    this.#voice = name;
  }

  get voice(): string {
    return this.#voice;
  }

  /** Speaks plain text (markup characters are spoken, not parsed). */
  synthesize(text: string, onChunk: EspeakChunkHandler): EspeakResult {
    const { escaped, map } = escapeText(text);
    return this.#run(escaped, map, onChunk);
  }

  /** Speaks SSML (`<speak>…<mark name="m"/>…</speak>`); offsets index the SSML string. */
  synthesizeSsml(ssml: string, onChunk: EspeakChunkHandler): EspeakResult {
    return this.#run(ssml, codePointOffsets(ssml), onChunk);
  }

  #run(input: string, map: Int32Array, onChunk: EspeakChunkHandler): EspeakResult {
    if (!this.#voice) throw new EspeakError("no voice set");
    if (this.#busy) throw new EspeakError("synthesize called from inside a chunk handler");
    this.#busy = true;
    let samples = 0, stopped = false, failure: unknown = null;
    try {
      this.#w.synthesize(input, (pcm, raw) => {
        if (stopped) return true;
        samples += pcm.length;
        const events = raw.map((e): EspeakEvent => ({
          type: e.type,
          charIndex: e.text_position > 0 ? map[Math.min(e.text_position, map.length) - 1] : -1,
          length: e.word_length,
          audioMs: e.audio_position,
          ...(e.id === undefined ? {} : { id: e.id }),
        }));
        try {
          if (onChunk(pcm, events) === true) stopped = true;
        } catch (err) {
          // An exception must not unwind through the C frames; stop espeak and rethrow after.
          failure = err;
          stopped = true;
        }
        return stopped;
      });
    } finally {
      this.#busy = false;
    }
    if (failure !== null) throw failure;
    return { samples, stopped };
  }
}

/**
 * Escapes &, < and > for espeak's SSML parser. `map[i]` is the UTF-16 offset in `text` of the
 * i-th code point of `escaped` (an entity's code points all map to its character); one extra
 * entry maps the end.
 */
export function escapeText(text: string): { escaped: string; map: Int32Array } {
  const out: string[] = [];
  const map: number[] = [];
  let i = 0;
  for (const ch of text) {
    const entity = ch === "&" ? "&amp;" : ch === "<" ? "&lt;" : ch === ">" ? "&gt;" : null;
    if (entity) {
      out.push(entity);
      for (let k = 0; k < entity.length; k++) map.push(i);
    } else {
      out.push(ch);
      map.push(i);
    }
    i += ch.length;
  }
  map.push(text.length);
  return { escaped: out.join(""), map: Int32Array.from(map) };
}

function codePointOffsets(s: string): Int32Array {
  const map: number[] = [];
  let i = 0;
  for (const ch of s) {
    map.push(i);
    i += ch.length;
  }
  map.push(s.length);
  return Int32Array.from(map);
}
