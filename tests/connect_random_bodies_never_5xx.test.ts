// Property: whatever arrives at sessions.connect — random JSON, mutated valid bodies, random
// credentials, origins and content types, bytes that are not UTF-8 or not JSON — the reply is
// never a 5xx (a node is registered, so missing_connect_params cannot happen), every refusal
// uses the error envelope and writes nothing, and every 200 writes exactly one session and one
// usage row. Sent through the real HTTP server, as a hostile or buggy client would.
import fc from "fast-check";
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  makeTenant,
  PAGE_ORIGIN,
  readReply,
  type Reply,
  rowCounts,
  startTestApi,
  type Tenant,
} from "./helpers/api_server.ts";
import { LOCAL_ENGINES } from "../common/capabilities.ts";

const CONNECT = "/api/v1/sessions.connect";
const RUNS = Number(Deno.env.get("CONNECT_FUZZ_RUNS") ?? 3000);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

// ---------- bodies ----------

/** Strings a database or a JSON layer may choke on: NUL, lone surrogates, astral, RTL. */
const nastyString = fc.oneof(
  fc.constantFrom("\u0000", "a\u0000b", "\ud800", "x\udfffy", "\ud83d\ude00", "\u202e", "\\", '"'),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ maxLength: 12 }),
);

const enumName = fc.oneof(
  fc.constantFrom(
    ...LOCAL_ENGINES.voices,
    ...LOCAL_ENGINES.tts_languages,
    "VOICE_UNSPECIFIED",
    "LANGUAGE_UNSPECIFIED",
    "LANGUAGE_SA",
    "LANGUAGE_XX",
    "voice_ananya",
    "",
  ),
  fc.string({ maxLength: 10 }).map((s) => `VOICE_${s}`),
  fc.string({ maxLength: 10 }).map((s) => `LANGUAGE_${s}`),
);

const metadataKey = fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/);

/** Valid labels, init and config, laid out in form A, form B, or a mix of both. */
function validBody(agentId: string) {
  const languages = fc.oneof(
    fc.constant(undefined),
    fc.record({
      tts: fc.constantFrom(...LOCAL_ENGINES.tts_languages),
      stt: fc.constant("LANGUAGE_EN"),
    }),
    fc.constant({ tts: "LANGUAGE_UNSPECIFIED", stt: "LANGUAGE_UNSPECIFIED" }),
  );
  const idle = fc.oneof(
    fc.constant(0),
    fc.integer({ min: 1000, max: 3_600_000 }),
    fc.integer({ min: 1000, max: 3_600_000 }).map(String), // proto3 JSON: integers as strings
  );
  const init = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 4,
  }) as fc.Arbitrary<JsonObject>;
  return fc.record({
    form: fc.constantFrom("A", "B", "mixed", "both"),
    init: fc.option(init, { nil: undefined }),
    voice: fc.option(fc.constantFrom(...LOCAL_ENGINES.voices, "VOICE_UNSPECIFIED"), {
      nil: undefined,
    }),
    languages,
    idle: fc.option(idle, { nil: undefined }),
    record: fc.option(fc.boolean(), { nil: undefined }),
    display_name: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
    metadata: fc.option(fc.dictionary(metadataKey, fc.string({ maxLength: 30 }), { maxKeys: 10 }), {
      nil: undefined,
    }),
    picks: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  }).map((v): JsonObject => {
    const config: JsonObject = {};
    if (v.voice) config.tts = { voice: v.voice };
    if (v.languages) {
      config.tts = { ...(config.tts as JsonObject ?? {}), language: v.languages.tts };
      config.stt = { language: v.languages.stt };
    }
    if (v.idle !== undefined) config.idle = { timeout_ms: v.idle };
    const body: JsonObject = { agent_id: agentId };
    // Where each of init / config / record goes: form A, form B, or (for "both") the same value
    // in both places, which is allowed because the two agree.
    const place = (i: number) =>
      v.form === "A"
        ? "A"
        : v.form === "B"
        ? "B"
        : v.form === "both"
        ? "both"
        : v.picks[i]
        ? "A"
        : "B";
    const agentInput: JsonObject = {};
    if (v.init) {
      const p = place(0);
      if (p !== "B") agentInput.payload = v.init;
      if (p !== "A") body.init = v.init;
    }
    if (Object.keys(config).length) {
      const p = place(1);
      if (p !== "B") agentInput.pipeline = config;
      if (p !== "A") body.config = { ...config };
    }
    if (v.record !== undefined) {
      const p = place(2);
      if (p !== "B") body.record = v.record;
      if (p !== "A") body.config = { ...(body.config as JsonObject ?? {}), record: v.record };
    }
    if (Object.keys(agentInput).length) body.agent_input = agentInput;
    if (v.display_name !== undefined) body.display_name = v.display_name;
    if (v.metadata !== undefined) body.metadata = v.metadata;
    return body;
  });
}

/** Every path (list of keys) in a JSON value, containers included. */
function paths(v: Json, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(v)) v.forEach((x, i) => paths(x, [...at, i], out));
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) paths(x, [...at, k], out);
  }
  return out;
}

function setAt(root: Json, path: (string | number)[], value: Json | undefined): Json {
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

// A deep nest is too deep for JSON.stringify's recursion on some stacks, so it is written as a
// marker string and expanded in the serialized text.
const DEEP = "\u0001deep:";
const deepNest = fc.record({
  depth: fc.constantFrom(10, 100, 1000, 5000, 8000, 30_000),
  open: fc.constantFrom("[", '{"a":'),
}).map(({ depth, open }) => `${DEEP}${open}${depth}`);
function expandDeep(text: string): string {
  return text.replace(/"\\u0001deep:(\[|\{\\"a\\":)(\d+)"/g, (_m, open: string, n: string) => {
    const depth = Number(n);
    return open === "["
      ? "[".repeat(depth) + "]".repeat(depth)
      : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  });
}

const hugeString = fc.constantFrom(199, 200, 201, 256, 257, 5000, 17_000, 66_000).chain((n) =>
  fc.constantFrom("x", "é", "\ud83d\ude00", "\u0000").map((c) => c.repeat(n))
);

const badMetadata = fc.oneof(
  fc.dictionary(metadataKey, fc.string({ maxLength: 3 }), { minKeys: 11, maxKeys: 14 }),
  fc.dictionary(fc.string({ maxLength: 70 }), nastyString, { maxKeys: 3 }),
  fc.dictionary(metadataKey, fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 3 }),
  fc.constantFrom<Json>({ k: "v".repeat(257) }, { k: "v".repeat(256) }, [], "meta", 1, { "": "" }),
) as fc.Arbitrary<Json>;

/** One change to a JSON value at one of its paths (picked by index). */
const mutation = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom("drop", "retype", "enum", "unknown", "huge", "deep", "nasty", "metadata"),
  json: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
  name: fc.oneof(
    fc.string({ maxLength: 10 }),
    fc.constantFrom("tts", "stt", "idle", "record", "x"),
  ),
  enumName,
  huge: hugeString,
  deep: deepNest,
  nasty: nastyString,
  metadata: badMetadata,
});
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(body: JsonObject, ms: Mutation[]): Json {
  let root: Json = structuredClone(body);
  for (const m of ms) {
    const all = paths(root);
    const path = all[m.at % all.length];
    const target: Json = path.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k], root);
    const isObject: boolean = target !== null && typeof target === "object" &&
      !Array.isArray(target);
    switch (m.kind) {
      case "drop":
        root = setAt(root, path, undefined);
        break;
      case "retype":
        root = setAt(root, path, m.json);
        break;
      case "enum":
        root = setAt(root, path, m.enumName);
        break;
      case "unknown":
        root = isObject
          ? setAt(root, [...path, m.name], m.json)
          : setAt(root, path, { [m.name]: m.json });
        break;
      case "huge":
        root = setAt(root, path, m.huge);
        break;
      case "deep":
        root = setAt(root, path, m.deep);
        break;
      case "nasty":
        root = isObject ? setAt(root, [...path, m.nasty], m.nasty) : setAt(root, path, m.nasty);
        break;
      case "metadata":
        if (root !== null && typeof root === "object" && !Array.isArray(root)) {
          root.metadata = m.metadata;
        }
        break;
    }
  }
  return root;
}

type Body = { text: string } | { bytes: Uint8Array<ArrayBuffer> };

function bodies(agentId: string): fc.Arbitrary<{ body: Body; note: string }> {
  const json = (note: string) => (v: Json) => ({
    body: { text: expandDeep(JSON.stringify(v)) },
    note,
  });
  const valid = validBody(agentId);
  const mutated = fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 })).map((
    [b, ms],
  ) => mutate(b, ms));
  const encoder = new TextEncoder();
  const notJson = fc.oneof(
    fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ bytes })),
    // Valid JSON with bytes that are not UTF-8 spliced in (lone continuation, overlong, 0xff).
    fc.tuple(
      valid,
      fc.nat(),
      fc.constantFrom([0xff], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]),
    )
      .map(([v, at, bad]) => {
        const b = encoder.encode(JSON.stringify(v));
        const i = at % (b.length + 1);
        return { bytes: new Uint8Array([...b.subarray(0, i), ...bad, ...b.subarray(i)]) };
      }),
    // Truncated, BOM-prefixed, or wrapped valid JSON.
    fc.tuple(valid, fc.nat(), fc.constantFrom("cut", "bom", "array", "twice", "ws")).map(
      ([v, at, how]) => {
        const t = JSON.stringify(v);
        const text = how === "cut"
          ? t.slice(0, at % t.length)
          : how === "bom"
          ? `\ufeff${t}`
          : how === "array"
          ? `[${t}]`
          : how === "twice"
          ? t + t
          : ` \n\t${t}\n `;
        return { text };
      },
    ),
    fc.constantFrom("", " ", "null", "{}", "[]", '"x"', "1e999", "{", "agent_id=ag_1").map((
      text,
    ) => ({
      text,
    })),
  );
  return fc.oneof(
    { arbitrary: valid.map(json("valid")), weight: 4 },
    { arbitrary: mutated.map(json("mutated")), weight: 8 },
    {
      arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => json("random json")(v as Json)),
      weight: 2,
    },
    {
      arbitrary: fc.dictionary(
        fc.constantFrom(
          "agent_id",
          "agent_input",
          "record",
          "config",
          "init",
          "display_name",
          "metadata",
        ),
        fc.jsonValue({ maxDepth: 3 }),
      ).map((v) => json("known keys, random values")(v as Json)),
      weight: 2,
    },
    { arbitrary: notJson.map((body) => ({ body, note: "not json" })), weight: 2 },
  );
}

// ---------- headers ----------

const headerText = (max: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: max,
  });

function authorizations(t: Tenant) {
  return fc.oneof(
    { arbitrary: fc.constant({ auth: `Bearer ${t.sk}`, kind: "sk" }), weight: 10 },
    {
      arbitrary: fc.oneof(
        fc.constant(PAGE_ORIGIN),
        fc.constant(PAGE_ORIGIN.toUpperCase()),
        fc.constant(`${PAGE_ORIGIN}/some/page?x=1`),
        fc.constantFrom("null", "", "http://evil.example", "http://127.0.0.1:5174", "file://"),
        fc.webUrl(),
        headerText(30),
        fc.constant(undefined),
      ).map((origin) => ({ auth: `Bearer ${t.pk}`, kind: "pk", origin })),
      weight: 4,
    },
    { arbitrary: fc.constant({ auth: undefined, kind: "none" }), weight: 1 },
    { arbitrary: headerText(60).map((auth) => ({ auth, kind: "malformed" })), weight: 1 },
    {
      arbitrary: fc.tuple(fc.constantFrom("sk_", "pk_", "SK_", ""), headerText(40)).map((
        [p, s],
      ) => ({ auth: `Bearer ${p}${s}`, kind: "random key" })),
      weight: 2,
    },
    {
      arbitrary: fc.constantFrom(
        `bearer ${t.sk}`,
        `Bearer  ${t.sk}`,
        `Bearer ${t.sk}x`,
        `Bearer ${t.sk.slice(0, -1)}`,
        `Basic ${t.sk}`,
        `Bearer ${t.pk.replace("pk_", "sk_")}`,
        `Bearer ${t.sk.replace("sk_", "pk_")}`,
        `Bearer adm_test_token_0123456789`,
        "Bearer",
        "Bearer ",
      ).map((auth) => ({ auth, kind: "near miss" })),
      weight: 2,
    },
  ) as fc.Arbitrary<{ auth?: string; kind: string; origin?: string }>;
}

const contentTypes = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      "text/plain",
      "application/json; charset=utf-16",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/octet-stream",
      "",
    ),
    weight: 2,
  },
  { arbitrary: headerText(40), weight: 1 },
);

// ---------- the property ----------

function assertEnvelope(r: Reply, context: string) {
  const b = r.body;
  assert(b !== null && typeof b === "object" && !Array.isArray(b), `not an envelope: ${context}`);
  assert(typeof b.error?.code === "string" && b.error.code !== "", `no error.code: ${context}`);
  assert(typeof b.error.message === "string" && b.error.message !== "", `no message: ${context}`);
  const d = b.error.details;
  assert(d !== null && typeof d === "object" && !Array.isArray(d), `bad details: ${context}`);
  assertEquals(b.info, b.error.message, `info differs from error.message: ${context}`);
  assert(typeof b.correlation_id === "string" && b.correlation_id !== "", `no id: ${context}`);
  assertEquals(r.headers.get("x-correlation-id"), b.correlation_id, context);
}

Deno.test("sessions.connect: random bodies and headers never get a 5xx, refusals write nothing", async () => {
  // No rate limits (per key, per address, sessions waiting for their offer per key): at fuzzing
  // speed from one address and one key they would refuse almost everything with 429, and the
  // 200 path (which must write exactly one session) would go untested.
  // The registered node never heartbeats here; it must not go stale mid-run, or the one
  // legitimate 500 (missing_connect_params) would appear.
  const api = await startTestApi({
    RATE_LIMIT_PER_SECOND: "0",
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
    PENDING_SESSIONS_PER_KEY: "0",
    NODE_STALE_SECONDS: "86400",
  });
  try {
    const tenant = await makeTenant(api);
    const seen = new Map<string, number>();
    const request = fc.record({
      body: bodies(tenant.agent_id),
      auth: authorizations(tenant),
      contentType: contentTypes,
      correlation: fc.option(fc.oneof(headerText(70), fc.constant("client-supplied-id-1")), {
        nil: undefined,
      }),
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const headers = new Headers();
        if (r.auth.auth !== undefined) headers.set("authorization", r.auth.auth);
        if (r.auth.origin !== undefined) headers.set("origin", r.auth.origin);
        if (r.contentType !== undefined) headers.set("content-type", r.contentType);
        if (r.correlation !== undefined) headers.set("x-correlation-id", r.correlation);
        const before = await rowCounts(api.db);
        const res = await fetch(api.url + CONNECT, {
          method: "POST",
          headers,
          body: "text" in r.body.body ? r.body.body.text : r.body.body.bytes,
        });
        const reply = await readReply(res);
        const after = await rowCounts(api.db);
        const context = `${r.body.note} / ${r.auth.kind} → ${reply.status} ${
          JSON.stringify(reply.body).slice(0, 300)
        }`;
        const tag = `${reply.status} ${reply.body?.error?.code ?? ""}`.trim();
        seen.set(tag, (seen.get(tag) ?? 0) + 1);

        assert(reply.status < 500, `5xx: ${context}`);
        assert(reply.headers.get("x-correlation-id"), `no X-Correlation-Id: ${context}`);
        if (reply.status === 200) {
          assertEquals(Object.keys(reply.body).sort(), ["session_id", "webrtc_request_params"]);
          assertEquals(after, {
            ...before,
            sessions: before.sessions + 1,
            usage: before.usage + 1,
            active: before.active + 1,
          }, `a 200 must write one session and one usage row: ${context}`);
        } else {
          assertEnvelope(reply, context);
          assertEquals(after, before, `a refusal wrote rows: ${context}`);
        }
      }),
      { numRuns: RUNS },
    );
    // The generator must actually reach the success path and the main refusals.
    const count = (prefix: string) =>
      [...seen].filter(([k]) => k.startsWith(prefix)).reduce((s, [, n]) => s + n, 0);
    assert(count("200") > RUNS / 20, `too few 200s: ${JSON.stringify([...seen])}`);
    assert(count("400") > RUNS / 20, `too few 400s: ${JSON.stringify([...seen])}`);
    assert(count("401") > 0 && count("403") > 0, `401/403 unseen: ${JSON.stringify([...seen])}`);
  } finally {
    await api.close();
  }
});
