// Hostile brain frames: valid frames (proto/frames.ts) with random and huge field values and
// out-of-order sequence numbers, the same frames with bytes flipped, cut, extended or spliced,
// and random bytes. A brain sends a sequence of them on one call.
import fc from "fast-check";
import { type BrainFrameKind, decodeBrainFrame, encodeBrainFrame } from "../../../proto/frames.ts";
import { ROSTER_LANGUAGES, ROSTER_VOICES } from "../../../common/capabilities.ts";
import { anyJson, nastyString, serialize } from "./json.ts";

export interface BrainFrameInput {
  bytes: Uint8Array;
  note: string;
  /** Whether the bytes decode as a frame (checked with proto/frames.ts when generated). */
  valid: boolean;
  /** Made by encodeBrainFrame, unmutated (a brain SDK would send exactly these bytes). */
  encoded: boolean;
}

function decodes(bytes: Uint8Array): boolean {
  try {
    decodeBrainFrame(bytes);
    return true;
  } catch {
    return false;
  }
}

const seq = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 20 }), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      0,
      1,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 53 - 1,
      Number.MAX_SAFE_INTEGER,
    ),
    weight: 1,
  },
);

/** Text from empty to huge; the huge ones are few (synthesis would be fed them). */
const text = (big: boolean) =>
  fc.oneof(
    { arbitrary: fc.string({ maxLength: 40 }), weight: 10 },
    { arbitrary: nastyString, weight: 3 },
    { arbitrary: fc.constantFrom("", " ", "\n", "Hello.", "नमस्ते।"), weight: 2 },
    {
      arbitrary: (big ? fc.constantFrom(4_000, 70_000, 300_000) : fc.constantFrom(2_000, 4_000))
        .map((n) => "word ".repeat(n / 5)),
      weight: 1,
    },
  );

const turnId = fc.oneof(
  fc.constantFrom("greeting", "t1", "t2", "", "t999999"),
  fc.string({ maxLength: 10 }),
  nastyString,
);

const enumName = (names: readonly string[], prefix: string) =>
  fc.oneof(
    fc.constantFrom(...names, `${prefix}_UNSPECIFIED`),
    fc.constantFrom(0, 1, 2, 7, 99, -1, 2 ** 31 - 1),
    fc.string({ maxLength: 8 }).map((s) => `${prefix}_${s}`),
  );

const config = fc.record({
  tts: fc.option(
    fc.record({
      voice: enumName(ROSTER_VOICES, "VOICE"),
      language: enumName(ROSTER_LANGUAGES, "LANGUAGE"),
    }, { requiredKeys: [] }),
    { nil: undefined },
  ),
  stt: fc.option(
    fc.record({ language: enumName(ROSTER_LANGUAGES, "LANGUAGE") }, { requiredKeys: [] }),
    {
      nil: undefined,
    },
  ),
  idle: fc.option(
    fc.record({
      timeout_ms: fc.constantFrom(0, 1, 999, 1000, 3_600_000, 3_600_001, 2 ** 32 - 1),
    }, { requiredKeys: [] }),
    { nil: undefined },
  ),
}, { requiredKeys: [] });

/** A frame's kind and body, as a brain's SDK would hand them to the encoder. */
export function frameBody(
  big: boolean,
): fc.Arbitrary<{ kind: BrainFrameKind; body: Record<string, unknown> }> {
  return fc.oneof(
    text(big).map((t) => ({ kind: "greeting" as const, body: { text: t } })),
    fc.record({
      turn_id: turnId,
      unit_id: fc.string({ maxLength: 12 }),
      text: text(big),
      last: fc.boolean(),
    })
      .map((b) => ({ kind: "speech_unit" as const, body: b })),
    fc.record({
      type: fc.oneof(fc.string({ maxLength: 20 }), nastyString),
      json: fc.oneof(
        { arbitrary: anyJson.map((v) => serialize(v)), weight: 6 },
        { arbitrary: fc.string({ maxLength: 30 }), weight: 2 },
        { arbitrary: fc.constantFrom("", "{", "null", "[[[[[["), weight: 1 },
        {
          arbitrary:
            (big ? fc.constantFrom(10_000, 70_000, 1_000_000) : fc.constantFrom(1000, 70_000))
              .map((n) => JSON.stringify({ blob: "x".repeat(n) })),
          weight: 1,
        },
        {
          arbitrary: fc.constantFrom(1000, 20_000).map((d) => "[".repeat(d) + "]".repeat(d)),
          weight: 1,
        },
      ),
    }).map((b) => ({ kind: "action" as const, body: b })),
    config.map((b) => ({ kind: "config" as const, body: b as Record<string, unknown> })),
    fc.oneof(fc.string({ maxLength: 20 }), nastyString).map((r) => ({
      kind: "end_session" as const,
      body: { reason: r },
    })),
  );
}

export type ByteMutation =
  | { op: "flip"; at: number; bit: number }
  | { op: "set"; at: number; value: number }
  | { op: "truncate"; at: number }
  | { op: "extend"; bytes: Uint8Array }
  | { op: "insert"; at: number; bytes: Uint8Array }
  | { op: "delete"; at: number; n: number }
  | { op: "varint"; at: number; bytes: Uint8Array };

/** Varints that overflow, are over long, or declare huge lengths. */
const badVarint = fc.constantFrom(
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
  [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
  [0x80, 0x80, 0x80, 0x80, 0x00],
  [0xff, 0xff, 0xff, 0xff, 0x0f],
  [0x80],
).map((a) => new Uint8Array(a));

export const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 7 })).map(([at, bit]) => ({
    op: "flip" as const,
    at,
    bit,
  })),
  fc.tuple(fc.nat(), fc.constantFrom(0x00, 0x01, 0x07, 0x08, 0x0a, 0x0f, 0x7f, 0x80, 0xff)).map((
    [at, value],
  ) => ({ op: "set" as const, at, value })),
  fc.nat().map((at) => ({ op: "truncate" as const, at })),
  fc.uint8Array({ minLength: 1, maxLength: 16 }).map((bytes) => ({ op: "extend" as const, bytes })),
  fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 })).map(([at, bytes]) => ({
    op: "insert" as const,
    at,
    bytes,
  })),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 })).map(([at, n]) => ({
    op: "delete" as const,
    at,
    n,
  })),
  fc.tuple(fc.nat(), badVarint).map(([at, bytes]) => ({ op: "varint" as const, at, bytes })),
);

export function mutateBytes(bytes: Uint8Array, ms: ByteMutation[]): Uint8Array {
  let b = Array.from(bytes);
  for (const m of ms) {
    const n = Math.max(1, b.length);
    switch (m.op) {
      case "flip":
        if (b.length) b[m.at % n] ^= 1 << m.bit;
        break;
      case "set":
        if (b.length) b[m.at % n] = m.value;
        break;
      case "truncate":
        b = b.slice(0, m.at % (b.length + 1));
        break;
      case "extend":
        b.push(...m.bytes);
        break;
      case "insert":
        b.splice(m.at % (b.length + 1), 0, ...m.bytes);
        break;
      case "delete":
        b.splice(m.at % n, m.n);
        break;
      case "varint":
        b.splice(m.at % (b.length + 1), 0, ...m.bytes);
        break;
    }
  }
  return new Uint8Array(b);
}

/** One frame: valid (random fields), valid then mutated, or random bytes. */
export function brainFrame(big = true): fc.Arbitrary<BrainFrameInput> {
  const valid = fc.tuple(seq, frameBody(big)).map(([s, f]) => {
    const bytes = encodeBrainFrame(s, f.kind, f.body);
    return { bytes, note: `${f.kind} seq ${s}`, valid: decodes(bytes), encoded: true };
  });
  return fc.oneof(
    { arbitrary: valid, weight: 8 },
    {
      arbitrary: fc.tuple(valid, fc.array(byteMutation, { minLength: 1, maxLength: 3 })).map((
        [v, ms],
      ) => ({
        bytes: mutateBytes(v.bytes, ms),
        note: `${v.note}, mutated (${ms.map((m) => m.op).join(",")})`,
        valid: false,
        encoded: false,
      })).map((f) => ({ ...f, valid: decodes(f.bytes) })),
      weight: 6,
    },
    {
      arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({
        bytes,
        note: `${bytes.length} random bytes`,
        valid: decodes(bytes),
        encoded: false,
      })),
      weight: 2,
    },
    {
      // A field number, then a length far beyond the frame: a decoder that trusts it allocates.
      arbitrary: fc.constantFrom(0x52, 0x5a, 0x62, 0x6a, 0x72).map((tag) => ({
        bytes: new Uint8Array([tag, 0xff, 0xff, 0xff, 0xff, 0x07, 0x41]),
        note: `field tag ${tag.toString(16)} declaring 2 GB`,
        valid: false,
        encoded: false,
      })),
      weight: 1,
    },
  );
}

/** What a hostile brain sends on one call: a few frames, sometimes many of the same. */
export function brainSequence(big = true): fc.Arbitrary<BrainFrameInput[]> {
  return fc.oneof(
    { arbitrary: fc.array(brainFrame(big), { minLength: 1, maxLength: 8 }), weight: 10 },
    {
      arbitrary: fc.tuple(brainFrame(false), fc.constantFrom(50, 500)).map(([f, n]) =>
        Array.from({ length: n }, () => f)
      ),
      weight: 1,
    },
  );
}

/**
 * What a brain sends on one real call: frames that decode (so the call lives on and plays),
 * half the time followed by one that does not.
 */
export function liveBrainSequence(): fc.Arbitrary<BrainFrameInput[]> {
  return fc.tuple(
    fc.array(brainFrame(false).filter((f) => f.valid), { minLength: 1, maxLength: 6 }),
    fc.option(brainFrame(false).filter((f) => !f.valid), { nil: undefined }),
  ).map(([good, bad]) => (bad ? [...good, bad] : good));
}
