// What the synthesis provider adapters (sarvam.ts, indic_parler.ts) share: turning the audio they
// receive (raw PCM16 little-endian, or a WAV file, arriving in pieces of any size) into 48 kHz
// mono chunks, base64 decoding, speaker overrides over a catalog, and cutting a long unit into
// requests a provider accepts.
import { Resampler } from "../../wasm/resampler.ts";
import type { SynthesisCatalog } from "./engine.ts";

/** The provider's audio is not what was asked for (not PCM16 mono, a broken header, bad base64). */
export class AudioFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AudioFormatError";
  }
}

const OUT_RATE = 48_000;
/** A WAV header longer than this (before its data chunk) is taken as garbage. */
const MAX_HEADER_BYTES = 64 * 1024;

export interface PcmDecoderOptions {
  /** Rate of raw PCM; a WAV header's rate wins. */
  rate?: number;
  /** "required": the stream is a WAV file; "auto": it is one if it starts with RIFF. */
  wav?: "required" | "auto";
  /** Speex quality of the resampling (0-10); default 5, as for espeak. */
  quality?: number;
}

/**
 * One stream of PCM16LE bytes (after an optional WAV header) to 48 kHz mono samples. push()
 * takes pieces of any size, even splitting a sample or the header; end() returns the resampler's
 * tail. It holds at most the header and one odd byte between pushes. close() frees the resampler.
 */
export class PcmDecoder {
  #rate: number | undefined;
  #wav: "required" | "auto" | "none";
  #quality: number;
  #head: Uint8Array | null = new Uint8Array(0); // bytes before the samples, until parsed
  #dataLeft = Infinity; // data bytes still to come (a streamed WAV may not say)
  #odd: number | null = null;
  #resampler: Resampler | null = null;
  #out = 0;

  constructor(options: PcmDecoderOptions = {}) {
    this.#rate = options.rate;
    this.#wav = options.wav ?? "none";
    this.#quality = options.quality ?? 5;
    if (this.#wav === "none") this.#head = null;
  }

  /** The input rate, once known (a WAV stream's after its header). */
  get rate(): number | undefined {
    return this.#rate;
  }

  /** 48 kHz samples produced so far (end() included once called). */
  get samples(): number {
    return this.#out;
  }

  get durationMs(): number {
    return this.#out / (OUT_RATE / 1000);
  }

  push(bytes: Uint8Array): Int16Array {
    if (this.#head) {
      const head = new Uint8Array(this.#head.length + bytes.length);
      head.set(this.#head);
      head.set(bytes, this.#head.length);
      const body = this.#parseHead(head);
      if (body === null) {
        this.#head = head;
        return new Int16Array(0);
      }
      this.#head = null;
      bytes = head.subarray(body);
    }
    if (this.#dataLeft < bytes.length) bytes = bytes.subarray(0, this.#dataLeft);
    this.#dataLeft -= bytes.length;
    return this.#resample(this.#samplesOf(bytes));
  }

  /** Ends the stream: the resampler's tail. Throws if the WAV header never completed. */
  end(): Int16Array {
    let last: Int16Array = new Int16Array(0);
    if (this.#head) {
      if (this.#wav === "required") {
        const ended = this.#head.length ? "in its header" : "before any audio";
        throw new AudioFormatError(`the WAV stream ended ${ended}`);
      }
      // "auto" and fewer bytes than a header: they were raw samples.
      const raw = this.#head;
      this.#head = null;
      last = this.#resample(this.#samplesOf(raw));
    }
    if (!this.#resampler) return last;
    const tail = this.#resampler.flush();
    this.#out += tail.length;
    if (!last.length) return tail;
    const out = new Int16Array(last.length + tail.length);
    out.set(last);
    out.set(tail, last.length);
    return out;
  }

  close(): void {
    this.#resampler?.close();
    this.#resampler = null;
  }

  /** Where the samples start, or null if more bytes are needed. Sets the rate. */
  #parseHead(b: Uint8Array): number | null {
    const tag = (o: number) => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);
    if (b.length < 12) {
      if (this.#wav === "auto" && !"RIFF".startsWith(tag(0).slice(0, b.length))) return 0;
      return null;
    }
    if (tag(0) !== "RIFF" || tag(8) !== "WAVE") {
      if (this.#wav === "auto") return 0;
      throw new AudioFormatError("not a RIFF/WAVE stream");
    }
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    let off = 12, fmt = false;
    while (off + 8 <= b.length) {
      const id = tag(off), size = v.getUint32(off + 4, true);
      if (id === "data") {
        if (!fmt) throw new AudioFormatError("WAV data chunk before its fmt chunk");
        // A WAV streamed before its length was known says 0 or 0xFFFFFFFF: read to the end.
        this.#dataLeft = size === 0 || size === 0xffffffff ? Infinity : size;
        return off + 8;
      }
      if (off + 8 + size > b.length) break;
      if (id === "fmt ") {
        const format = v.getUint16(off + 8, true), channels = v.getUint16(off + 10, true);
        const rate = v.getUint32(off + 12, true), bits = v.getUint16(off + 22, true);
        if ((format !== 1 && format !== 0xfffe) || bits !== 16 || channels !== 1) {
          throw new AudioFormatError(
            `WAV must be 16-bit PCM mono (format ${format}, ${bits} bits, ${channels} channels)`,
          );
        }
        if (!rate) throw new AudioFormatError("WAV sample rate is 0");
        this.#rate = rate;
        fmt = true;
      }
      off += 8 + size + (size & 1);
    }
    if (b.length > MAX_HEADER_BYTES) throw new AudioFormatError("WAV header has no data chunk");
    return null;
  }

  /** Little-endian samples, carrying an odd byte over to the next piece. */
  #samplesOf(bytes: Uint8Array): Int16Array {
    const lead = this.#odd === null ? 0 : 1;
    const n = (bytes.length + lead) >> 1;
    const out = new Int16Array(n);
    let i = 0, k = 0;
    if (lead && n) {
      out[k++] = ((bytes[0] << 8) | this.#odd!) << 16 >> 16;
      i = 1;
      this.#odd = null;
    }
    for (; k < n; k++, i += 2) out[k] = ((bytes[i + 1] << 8) | bytes[i]) << 16 >> 16;
    if (i < bytes.length) this.#odd = bytes[i];
    return out;
  }

  #resample(input: Int16Array): Int16Array {
    if (!input.length) return input;
    if (!this.#rate) throw new AudioFormatError("raw PCM needs a sample rate");
    let out = input;
    if (this.#rate !== OUT_RATE) {
      this.#resampler ??= new Resampler(this.#rate, OUT_RATE, { quality: this.#quality });
      out = this.#resampler.process(input);
    }
    this.#out += out.length;
    return out;
  }
}

/** Bytes of a base64 string (RFC 4648, padding optional). */
export function decodeBase64(s: string): Uint8Array {
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    throw new AudioFormatError("invalid base64 audio");
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Language → persona → provider speaker, as given in an engine's `speakers` option. */
export type SpeakerOverrides = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * `catalog` with `overrides` laid over it, persona by persona. `allowed` says which languages an
 * override may name (the provider cannot speak the others).
 */
export function withSpeakers(
  catalog: SynthesisCatalog,
  overrides: SpeakerOverrides | undefined,
  allowed: (language: string) => boolean,
): SynthesisCatalog {
  const out: Record<string, Record<string, string>> = {};
  for (const [language, personas] of Object.entries(catalog)) out[language] = { ...personas };
  for (const [language, personas] of Object.entries(overrides ?? {})) {
    if (!allowed(language)) throw new RangeError(`no speaker can be set for ${language}`);
    for (const [persona, speaker] of Object.entries(personas)) {
      if (typeof speaker !== "string" || !speaker) {
        throw new RangeError(`speaker for ${language} ${persona} must be a name`);
      }
      (out[language] ??= {})[persona] = speaker;
    }
  }
  return out;
}

/** A slice of a unit's text, as UTF-16 offsets (end exclusive). */
export interface TextPart {
  start: number;
  end: number;
}

const sentences = new Intl.Segmenter(undefined, { granularity: "sentence" });
const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * `text` cut into consecutive parts of at most `maxChars` UTF-16 units that together cover it:
 * whole sentences packed together where they fit, a longer sentence cut after a space, a longer
 * word between graphemes. For providers with a per-request limit; offsets stay the unit's own.
 */
export function textParts(text: string, maxChars: number): TextPart[] {
  if (text.length <= maxChars) return [{ start: 0, end: text.length }];
  const pieces: TextPart[] = [];
  const cut = (start: number, end: number, level: number) => {
    if (end - start <= maxChars || level > 2) {
      pieces.push({ start, end });
      return;
    }
    const slice = text.slice(start, end);
    const bounds = level === 0
      ? [...sentences.segment(slice)].map((s) => s.index)
      : level === 1
      ? [...slice.matchAll(/\S+\s*/gu)].map((m) => m.index)
      : [...graphemes.segment(slice)].map((s) => s.index);
    bounds.push(slice.length);
    if (bounds[0] !== 0) bounds.unshift(0);
    for (let i = 0; i + 1 < bounds.length; i++) {
      cut(start + bounds[i], start + bounds[i + 1], level + 1);
    }
  };
  cut(0, text.length, 0);
  const parts: TextPart[] = [];
  for (const p of pieces) {
    const last = parts.at(-1);
    if (last && p.end - last.start <= maxChars) last.end = p.end;
    else parts.push({ ...p });
  }
  return parts;
}
