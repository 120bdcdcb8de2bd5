// JSON building blocks every surface's generators share: strings databases and JSON layers choke
// on, values of every type, deep nests too deep to build as objects, and big values.
import fc from "fast-check";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

/** NUL, lone surrogates, astral and RTL characters, escapes, and plain random text. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x\udfffy",
    "\ud83d\ude00",
    "\u202e",
    "\\",
    '"',
    "\r\n",
    "\ufeff",
    "</script>",
    "%00",
    "${x}",
  ),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ maxLength: 12 }),
);

/** Any JSON value, strings drawn partly from nastyString. */
export const anyJson: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(0, -0, 1e308, -1e308, 2 ** 53 + 1, 4294967296, -1),
    ),
    nastyString,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), nastyString), tie("v"), { maxKeys: 4 }),
  ),
})).v;

// A deep nest is too deep for JSON.stringify's recursion, so it travels as a marker string and
// is expanded in the serialized text by `serialize`.
const DEEP = "\u0001deep:";
export const deepNest: fc.Arbitrary<string> = fc.record({
  depth: fc.constantFrom(65, 100, 1000, 10_000, 30_000),
  open: fc.constantFrom("[", '{"a":'),
}).map(({ depth, open }) => `${DEEP}${open}${depth}`);

/** JSON text of `v`, deep-nest markers expanded. */
export function serialize(v: Json): string {
  return JSON.stringify(v).replace(
    /"\\u0001deep:(\[|\{\\"a\\":)(\d+)"/g,
    (_m, open: string, n: string) => {
      const depth = Number(n);
      return open === "["
        ? "[".repeat(depth) + "]".repeat(depth)
        : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    },
  );
}

/** Strings around the sizes limits are set at (200, 256, 16 KiB, 64 KiB) and past them. */
export const bigString: fc.Arbitrary<string> = fc.constantFrom(
  199,
  200,
  201,
  256,
  257,
  5000,
  16_385,
  66_000,
  200_000,
).chain((n) => fc.constantFrom("x", "é", "\ud83d\ude00", "\u0000").map((c) => c.repeat(n)));

/** Bytes that are not UTF-8, or not JSON: random, truncated, with a BOM, wrapped. */
export function notJson(valid: fc.Arbitrary<Json>): fc.Arbitrary<Uint8Array> {
  const enc = new TextEncoder();
  return fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc.tuple(
      valid,
      fc.nat(),
      fc.constantFrom([0xff], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x00]),
    ).map(([v, at, bad]) => {
      const b = enc.encode(JSON.stringify(v));
      const i = at % (b.length + 1);
      return new Uint8Array([...b.subarray(0, i), ...bad, ...b.subarray(i)]);
    }),
    fc.tuple(valid, fc.nat(), fc.constantFrom("cut", "bom", "array", "twice", "ws", "comment"))
      .map(([v, at, how]) => {
        const t = JSON.stringify(v);
        return enc.encode(
          how === "cut"
            ? t.slice(0, at % Math.max(1, t.length))
            : how === "bom"
            ? `\ufeff${t}`
            : how === "array"
            ? `[${t}]`
            : how === "twice"
            ? t + t
            : how === "ws"
            ? ` \n\t${t}\n `
            : `/* c */${t}`,
        );
      }),
    fc.constantFrom("", " ", "null", "{}", "[]", '"x"', "1e999", "{", "NaN", "a=b&c=d").map((s) =>
      enc.encode(s)
    ),
  );
}

/** Every path (list of keys) in a JSON value, containers included. */
export function paths(
  v: Json,
  at: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  }
  return out;
}

/** `root` with the value at `path` replaced (or removed when `value` is undefined). */
export function setAt(root: Json, path: (string | number)[], value: Json | undefined): Json {
  if (path.length === 0) return value === undefined ? null : value;
  let parent = root as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, Json>;
  const last = path[path.length - 1];
  if (value === undefined) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = value;
  return root;
}

/** One change at one path of a JSON value (picked by index). */
export const jsonMutation = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom("drop", "retype", "unknown", "big", "deep", "nasty"),
  json: anyJson,
  name: fc.oneof(fc.string({ maxLength: 10 }), nastyString),
  big: bigString,
  deep: deepNest,
  nasty: nastyString,
});
export type JsonMutation = typeof jsonMutation extends fc.Arbitrary<infer T> ? T : never;

export function mutateJson(value: Json, ms: JsonMutation[]): Json {
  let root: Json = structuredClone(value);
  for (const m of ms) {
    const all = paths(root);
    const path = all[m.at % all.length];
    const target = path.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k], root);
    const isObject = target !== null && typeof target === "object" && !Array.isArray(target);
    switch (m.kind) {
      case "drop":
        root = setAt(root, path, undefined);
        break;
      case "retype":
        root = setAt(root, path, m.json);
        break;
      case "unknown":
        root = isObject
          ? setAt(root, [...path, m.name], m.json)
          : setAt(root, path, { [m.name]: m.json });
        break;
      case "big":
        root = setAt(root, path, m.big);
        break;
      case "deep":
        root = setAt(root, path, m.deep);
        break;
      case "nasty":
        root = setAt(root, path, m.nasty);
        break;
    }
  }
  return root;
}

/** Printable ASCII header text. */
export const headerText = (max: number): fc.Arbitrary<string> =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: max,
  });
