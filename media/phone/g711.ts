/**
 * G.711 (ITU-T, 1972): μ-law (PCMU, RTP payload 0) and A-law (PCMA, payload 8), the two codecs
 * every SIP trunk and telephony WebSocket stream speaks. The conversions are the reference ones
 * (the Sun Microsystems g711.c that sox, SpanDSP and most stacks carry), made into tables once:
 * decoding is a 256-entry lookup, encoding a 64 Ki-entry lookup on the 16-bit sample, so a 20 ms
 * frame costs 160 array reads.
 *
 * Hand-written rather than a dependency: the only maintained-looking npm package, `alawmulaw`
 * (6.0.0, MIT, pure JS), has had no release in years, computes every sample with branches instead
 * of tables, and would be an import-map entry for ~60 lines of a frozen standard. These tables are
 * checked against sox's encoder and decoder on every 16-bit value (g711.test.ts).
 */

export type G711Law = "PCMU" | "PCMA";

/**
 * Sun g711.c linear2ulaw on a 16-bit sample (14 bits used, bias 0x84, clipped at 8159). The
 * sample is rounded to 14 bits, not truncated, as sox does: the nearest level, and the same bytes.
 */
function ulawOf(sample: number): number {
  let pcm = Math.min(8191, (sample + 2) >> 2);
  let mask = 0xff;
  if (pcm < 0) {
    pcm = -pcm;
    mask = 0x7f;
  }
  if (pcm > 8159) pcm = 8159;
  pcm += 0x84 >> 2;
  let seg = 0;
  while (seg < 8 && pcm > (0x40 << seg) - 1) seg++;
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << 4) | ((pcm >> (seg + 1)) & 0x0f)) ^ mask;
}

/** Sun g711.c ulaw2linear. */
function linearOfUlaw(code: number): number {
  const u = ~code & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

/** Sun g711.c linear2alaw on a 16-bit sample (rounded to 13 bits, even bits inverted by 0x55). */
function alawOf(sample: number): number {
  let pcm = Math.min(4095, (sample + 4) >> 3);
  let mask = 0xd5;
  if (pcm < 0) {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  let seg = 0;
  while (seg < 8 && pcm > (0x20 << seg) - 1) seg++;
  if (seg >= 8) return 0x7f ^ mask;
  const quant = seg < 2 ? (pcm >> 1) & 0x0f : (pcm >> seg) & 0x0f;
  return ((seg << 4) | quant) ^ mask;
}

/** Sun g711.c alaw2linear. */
function linearOfAlaw(code: number): number {
  const a = code ^ 0x55;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

function encodeTable(of: (s: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  // Indexed by the sample's 16-bit pattern (s & 0xffff).
  for (let s = -32768; s < 32768; s++) table[s & 0xffff] = of(s);
  return table;
}

function decodeTable(of: (c: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let c = 0; c < 256; c++) table[c] = of(c);
  return table;
}

const ENCODE: Record<G711Law, Uint8Array> = {
  PCMU: encodeTable(ulawOf),
  PCMA: encodeTable(alawOf),
};
const DECODE: Record<G711Law, Int16Array> = {
  PCMU: decodeTable(linearOfUlaw),
  PCMA: decodeTable(linearOfAlaw),
};

/** The code of digital silence: what a 20 ms frame of zeros encodes to (0xff μ-law, 0xd5 A-law). */
export const G711_SILENCE: Record<G711Law, number> = {
  PCMU: ENCODE.PCMU[0],
  PCMA: ENCODE.PCMA[0],
};

/** Encodes 16-bit PCM into G.711 codes, one byte per sample (into `out` when given). */
export function g711Encode(
  law: G711Law,
  pcm: Int16Array,
  out: Uint8Array = new Uint8Array(pcm.length),
): Uint8Array {
  if (out.length < pcm.length) throw new RangeError("output shorter than the input");
  const table = ENCODE[law];
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i] & 0xffff];
  return out;
}

/** Decodes G.711 codes into 16-bit PCM, one sample per byte (into `out` when given). */
export function g711Decode(
  law: G711Law,
  codes: Uint8Array,
  out: Int16Array = new Int16Array(codes.length),
): Int16Array {
  if (out.length < codes.length) throw new RangeError("output shorter than the input");
  const table = DECODE[law];
  for (let i = 0; i < codes.length; i++) out[i] = table[codes[i]];
  return out;
}
