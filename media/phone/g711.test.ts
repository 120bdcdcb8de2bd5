import { assertEquals } from "../../tests/helpers/assert.ts";
import { G711_SILENCE, g711Decode, g711Encode, type G711Law } from "./g711.ts";

/** Runs sox on raw bytes (stdin → stdout) with the given input and output format arguments. */
async function sox(input: Uint8Array, from: string[], to: string[]): Promise<Uint8Array> {
  const child = new Deno.Command("sox", {
    // -D: no dither, so sox quantizes the samples as given.
    args: ["-D", "-t", "raw", "-r", "8000", "-c", "1", ...from, "-", "-t", "raw", ...to, "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  // Written while sox's output is read, so neither side waits on a full pipe.
  const writer = child.stdin.getWriter();
  const [, out] = await Promise.all([
    writer.write(input).then(() => writer.close()),
    child.output(),
  ]);
  if (!out.success) throw new Error("sox failed");
  return out.stdout;
}

const SOX_ENCODING: Record<G711Law, string> = { PCMU: "u-law", PCMA: "a-law" };

for (const law of ["PCMU", "PCMA"] as const) {
  Deno.test(`${law}: every 16-bit sample encodes to the byte sox gives`, async () => {
    const all = new Int16Array(65536);
    for (let i = 0; i < all.length; i++) all[i] = i - 32768;
    const ref = await sox(new Uint8Array(all.buffer), ["-e", "signed", "-b", "16"], [
      "-e",
      SOX_ENCODING[law],
      "-b",
      "8",
    ]);
    const ours = g711Encode(law, all);
    const wrong: number[] = [];
    for (let i = 0; i < all.length; i++) if (ours[i] !== ref[i]) wrong.push(all[i]);
    assertEquals(ref.length, 65536);
    assertEquals(wrong.slice(0, 10), [], `${wrong.length} samples encode differently`);
  });

  Deno.test(`${law}: every code decodes to the sample sox gives`, async () => {
    const codes = new Uint8Array(256).map((_, i) => i);
    const raw = await sox(codes, ["-e", SOX_ENCODING[law], "-b", "8"], [
      "-e",
      "signed",
      "-b",
      "16",
    ]);
    const ref = new Int16Array(raw.buffer, raw.byteOffset, 256);
    assertEquals(Array.from(g711Decode(law, codes)), Array.from(ref));
  });

  Deno.test(`${law}: a decoded code encodes back to itself`, () => {
    const codes = new Uint8Array(256).map((_, i) => i);
    const back = g711Encode(law, g711Decode(law, codes));
    // μ-law has two zeros (0x7f and 0xff, -0 and +0): both decode to 0, which encodes to 0xff.
    const expected = Array.from(codes, (c) => law === "PCMU" && c === 0x7f ? 0xff : c);
    assertEquals(Array.from(back), expected);
  });
}

Deno.test("the ITU's fixed points: silence, full scale and the smallest steps", () => {
  assertEquals([G711_SILENCE.PCMU, G711_SILENCE.PCMA], [0xff, 0xd5]);
  const u = g711Decode("PCMU", new Uint8Array([0x00, 0x80, 0xff, 0x7f, 0xfe, 0x7e]));
  assertEquals(Array.from(u), [-32124, 32124, 0, 0, 8, -8]);
  const a = g711Decode("PCMA", new Uint8Array([0xd5, 0x55, 0xaa, 0x2a]));
  assertEquals(Array.from(a), [8, -8, 32256, -32256]);
  // Clipping: beyond the largest level every sample takes the largest code.
  assertEquals(Array.from(g711Encode("PCMU", new Int16Array([32767, -32768]))), [0x80, 0x00]);
  assertEquals(Array.from(g711Encode("PCMA", new Int16Array([32767, -32768]))), [0xaa, 0x2a]);
});

Deno.test("encode and decode write into a given buffer and refuse a short one", () => {
  const out = new Uint8Array(4);
  g711Encode("PCMU", new Int16Array([0, 0]), out);
  assertEquals(Array.from(out), [0xff, 0xff, 0, 0]);
  let threw = false;
  try {
    g711Decode("PCMA", new Uint8Array(3), new Int16Array(2));
  } catch (e) {
    threw = e instanceof RangeError;
  }
  assertEquals(threw, true);
});
