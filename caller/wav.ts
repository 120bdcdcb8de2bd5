/** 16-bit PCM WAV reading/writing and upsampling to 48 kHz mono for the test caller. */

export interface Pcm {
  sampleRate: number;
  /** Mono samples (multi-channel files are averaged). */
  samples: Int16Array;
}

export function parseWav(bytes: Uint8Array): Pcm {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (o: number) => String.fromCharCode(...bytes.subarray(o, o + 4));
  if (bytes.length < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") {
    throw new Error("not a RIFF/WAVE file");
  }
  let fmt: { format: number; channels: number; rate: number; bits: number } | undefined;
  let off = 12;
  while (off + 8 <= bytes.length) {
    const id = tag(off);
    // espeak-ng writes 0xFFFFFFFF-ish sizes when streaming to a pipe; clamp to the file.
    const size = Math.min(v.getUint32(off + 4, true), bytes.length - off - 8);
    const body = off + 8;
    if (id === "fmt ") {
      fmt = {
        format: v.getUint16(body, true),
        channels: v.getUint16(body + 2, true),
        rate: v.getUint32(body + 4, true),
        bits: v.getUint16(body + 14, true),
      };
    } else if (id === "data") {
      if (!fmt) throw new Error("WAV data chunk before fmt chunk");
      // 0xFFFE is WAVE_FORMAT_EXTENSIBLE; sox uses it for some outputs, still plain PCM here.
      if ((fmt.format !== 1 && fmt.format !== 0xfffe) || fmt.bits !== 16) {
        throw new Error(`WAV must be 16-bit PCM (format ${fmt.format}, ${fmt.bits} bits)`);
      }
      const frames = Math.floor(size / (2 * fmt.channels));
      const samples = new Int16Array(frames);
      for (let i = 0; i < frames; i++) {
        let sum = 0;
        for (let c = 0; c < fmt.channels; c++) {
          sum += v.getInt16(body + 2 * (i * fmt.channels + c), true);
        }
        samples[i] = Math.round(sum / fmt.channels);
      }
      return { sampleRate: fmt.rate, samples };
    }
    off = body + size + (size & 1);
  }
  throw new Error("WAV has no data chunk");
}

export async function readWav(path: string): Promise<Pcm> {
  return parseWav(await Deno.readFile(path));
}

export function encodeWav(pcm: Pcm): Uint8Array {
  const n = pcm.samples.length;
  const out = new Uint8Array(44 + 2 * n);
  const v = new DataView(out.buffer);
  const put = (o: number, s: string) => [...s].forEach((ch, i) => (out[o + i] = ch.charCodeAt(0)));
  put(0, "RIFF");
  v.setUint32(4, 36 + 2 * n, true);
  put(8, "WAVE");
  put(12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, pcm.sampleRate, true);
  v.setUint32(28, pcm.sampleRate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  put(36, "data");
  v.setUint32(40, 2 * n, true);
  for (let i = 0; i < n; i++) v.setInt16(44 + 2 * i, pcm.samples[i], true);
  return out;
}

/**
 * To 48 kHz by linear interpolation. Only upsampling is accepted: without a low-pass filter,
 * downsampling would alias (make such files with `sox in.wav -r 48000 -c 1 -b 16 out.wav`).
 */
export function to48k(pcm: Pcm): Int16Array {
  if (pcm.sampleRate === 48000) return pcm.samples;
  if (pcm.sampleRate > 48000) {
    throw new Error(`${pcm.sampleRate} Hz input: downsample to 48 kHz with sox first`);
  }
  const src = pcm.samples;
  const n = Math.floor((src.length * 48000) / pcm.sampleRate);
  const out = new Int16Array(n);
  const step = pcm.sampleRate / 48000;
  for (let i = 0; i < n; i++) {
    const x = i * step;
    const j = Math.floor(x);
    const a = src[j], b = src[Math.min(j + 1, src.length - 1)];
    out[i] = Math.round(a + (b - a) * (x - j));
  }
  return out;
}

export function rms(x: ArrayLike<number>, from = 0, to = x.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i] * x[i];
  return to > from ? Math.sqrt(s / (to - from)) : 0;
}
