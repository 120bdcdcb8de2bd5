// Hostile sessions.connect requests: bodies (valid, mutated, random, not JSON, oversized) under
// hostile headers (Authorization forms, Origin values, Content-Type, X-Correlation-Id,
// X-Forwarded-For, huge and many headers) sent with fetch, and requests fetch cannot send
// (Content-Length lies, conflicting framing, control characters, header blocks past the
// server's limits, unknown methods) written raw on a socket.
import fc from "fast-check";
import { LOCAL_ENGINES } from "../../../common/capabilities.ts";
import {
  anyJson,
  bigString,
  headerText,
  type Json,
  jsonMutation,
  type JsonObject,
  mutateJson,
  nastyString,
  notJson,
  serialize,
} from "./json.ts";

export const CONNECT_PATH = "/api/v1/sessions.connect";

export interface ConnectTenant {
  agent_id: string;
  sk: string;
  pk: string;
  /** The origin the publishable key is allowed from. */
  origin: string;
}

export interface FetchInput {
  via: "fetch";
  note: string;
  method: string;
  path: string;
  headers: [string, string][];
  body?: Uint8Array;
  /**
   * The header block is near or past what Deno's HTTP server takes (64 KiB, about 128 headers):
   * it may refuse the request itself, outside the envelope.
   */
  overLimits: boolean;
}

export interface RawInput {
  via: "raw";
  note: string;
  bytes: Uint8Array;
  after: "keep" | "half" | "close";
  /**
   * The request is malformed at the HTTP level: Deno's server may refuse it itself (a bare 400
   * with no body, or a closed connection) before the app, and so outside the envelope.
   */
  framing: boolean;
  /** Requests in `bytes` (pipelined), so answers to wait for. */
  responses?: number;
}

export type ConnectInput = FetchInput | RawInput;

const enc = new TextEncoder();

// ---------- bodies ----------

const metadataKey = fc.stringMatching(/^[A-Za-z0-9_.-]{1,64}$/);

/** Valid bodies in form A, form B or mixed. */
export function validBody(agentId: string): fc.Arbitrary<JsonObject> {
  return fc.record({
    formB: fc.boolean(),
    init: fc.option(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      { nil: undefined },
    ),
    voice: fc.option(fc.constantFrom(...LOCAL_ENGINES.voices), { nil: undefined }),
    language: fc.option(fc.constantFrom(...LOCAL_ENGINES.tts_languages), { nil: undefined }),
    idle: fc.option(
      fc.oneof(fc.constant(0), fc.integer({ min: 1000, max: 3_600_000 })),
      { nil: undefined },
    ),
    record: fc.option(fc.boolean(), { nil: undefined }),
    display_name: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
    metadata: fc.option(fc.dictionary(metadataKey, fc.string({ maxLength: 30 }), { maxKeys: 10 }), {
      nil: undefined,
    }),
  }).map((v) => {
    const config: JsonObject = {};
    if (v.voice) config.tts = { voice: v.voice };
    if (v.language) {
      config.tts = { ...(config.tts as JsonObject ?? {}), language: v.language };
      config.stt = { language: "LANGUAGE_EN" };
    }
    if (v.idle !== undefined) config.idle = { timeout_ms: v.idle };
    const body: JsonObject = { agent_id: agentId };
    const init = v.init as JsonObject | undefined;
    if (v.formB) {
      if (init) body.init = init;
      if (Object.keys(config).length) body.config = config;
      if (v.record !== undefined) {
        body.config = { ...(body.config as JsonObject ?? {}), record: v.record };
      }
    } else {
      const agentInput: JsonObject = {};
      if (init) agentInput.payload = init;
      if (Object.keys(config).length) agentInput.pipeline = config;
      if (Object.keys(agentInput).length) body.agent_input = agentInput;
      if (v.record !== undefined) body.record = v.record;
    }
    if (v.display_name !== undefined) body.display_name = v.display_name;
    if (v.metadata !== undefined) body.metadata = v.metadata;
    return body;
  });
}

/** A connect body as bytes, with a note saying what kind it is. */
export function connectBody(agentId: string): fc.Arbitrary<{ bytes: Uint8Array; note: string }> {
  const valid = validBody(agentId);
  const text = (note: string) => (v: Json) => ({ bytes: enc.encode(serialize(v)), note });
  return fc.oneof(
    { arbitrary: valid.map(text("valid body")), weight: 4 },
    {
      arbitrary: fc.tuple(valid, fc.array(jsonMutation, { minLength: 1, maxLength: 3 }))
        .map(([b, ms]) => mutateJson(b, ms)).map(text("mutated body")),
      weight: 8,
    },
    { arbitrary: anyJson.map(text("random JSON")), weight: 2 },
    {
      arbitrary: fc.dictionary(
        fc.constantFrom("agent_id", "agent_input", "record", "config", "init", "metadata"),
        anyJson,
      ).map((v) => text("known keys, random values")(v as Json)),
      weight: 2,
    },
    {
      arbitrary: notJson(valid as fc.Arbitrary<Json>).map((bytes) => ({ bytes, note: "not JSON" })),
      weight: 2,
    },
    {
      // Around the 64 KiB limit: padding in display_name (a 400) or a body over it (a 413).
      arbitrary: fc.constantFrom(60_000, 65_400, 65_536, 65_537, 70_000, 300_000).map((n) => {
        const head = `{"agent_id":"${agentId}","display_name":"`;
        const pad = Math.max(0, n - head.length - 2);
        return { bytes: enc.encode(head + "x".repeat(pad) + '"}'), note: `body of ${n} bytes` };
      }),
      weight: 1,
    },
    { arbitrary: bigString.map((s) => text("big string body")(s)), weight: 1 },
  );
}

// ---------- headers ----------

function authorization(t: ConnectTenant): fc.Arbitrary<{ auth?: string; pk: boolean }> {
  return fc.oneof(
    { arbitrary: fc.constant({ auth: `Bearer ${t.sk}`, pk: false }), weight: 8 },
    { arbitrary: fc.constant({ auth: `Bearer ${t.pk}`, pk: true }), weight: 4 },
    { arbitrary: fc.constant({ auth: undefined, pk: false }), weight: 1 },
    {
      arbitrary: fc.constantFrom(
        `bearer ${t.sk}`,
        `BEARER ${t.sk}`,
        `Bearer  ${t.sk}`,
        `Bearer ${t.sk} `,
        `Bearer ${t.sk}x`,
        `Bearer ${t.sk.slice(0, -1)}`,
        `Basic ${t.sk}`,
        `Bearer ${t.pk.replace("pk_", "sk_")}`,
        `Bearer ${t.sk.replace("sk_", "pk_")}`,
        `Bearer ${t.sk}, Bearer ${t.pk}`,
        "Bearer adm_test_token_0123456789",
        "Bearer",
        "Bearer ",
        "",
        `Bearer ${"sk_" + "A".repeat(8000)}`,
        `Bearer ${"x".repeat(60_000)}`,
      ).map((auth) => ({ auth, pk: false })),
      weight: 3,
    },
    {
      arbitrary: fc.tuple(fc.constantFrom("sk_", "pk_", "SK_", ""), headerText(40))
        .map(([p, s]) => ({ auth: `Bearer ${p}${s}`, pk: false })),
      weight: 2,
    },
    { arbitrary: headerText(60).map((auth) => ({ auth, pk: false })), weight: 1 },
  );
}

function origin(t: ConnectTenant): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(t.origin), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        undefined,
        t.origin.toUpperCase(),
        `${t.origin}/`,
        `${t.origin}/page?x=1`,
        `${t.origin}:80`,
        `${t.origin}, http://evil.example`,
        "null",
        "",
        "http://evil.example",
        "file://",
        "http://127.0.0.1:5174",
        "http://[::1]:5173",
        "http://xn--e1afmkfd.xn--p1ai",
        "javascript:alert(1)",
        `http://${"a".repeat(30_000)}.example`,
      ),
      weight: 3,
    },
    { arbitrary: fc.webUrl(), weight: 1 },
    { arbitrary: headerText(40), weight: 1 },
  );
}

const contentType = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      "text/plain",
      "application/json; charset=utf-16",
      "application/json; charset=latin1",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/octet-stream",
      "",
      "application/json, text/html",
    ),
    weight: 2,
  },
  { arbitrary: headerText(40), weight: 1 },
);

const ipv4 = fc.ipV4();
const forwardedFor = fc.oneof(
  ipv4,
  fc.ipV6(),
  fc.array(fc.oneof(ipv4, fc.ipV6(), headerText(20)), { minLength: 1, maxLength: 8 })
    .map((a) => a.join(", ")),
  fc.constantFrom(
    "unknown",
    "127.0.0.1:8080",
    "[::1]:80",
    "::ffff:10.0.0.1",
    "1.2.3.4,,,",
    ", ,",
    "999.1.1.1",
    "01.2.3.4",
    "fe80::1%eth0",
    Array.from({ length: 2000 }, (_, i) => `10.${i >> 8 & 255}.${i & 255}.1`).join(", "),
  ),
  headerText(80),
);

const correlationId = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._-]{8,64}$/),
  headerText(70),
  fc.constantFrom(
    "",
    "short",
    "x".repeat(65),
    "x".repeat(30_000),
    "cor_../../etc",
    "a b c d e f g",
  ),
);

/** Extra headers: random names and values, duplicates, and many of them. */
const extraHeaders = fc.oneof(
  { arbitrary: fc.constant<[string, string][]>([]), weight: 6 },
  {
    arbitrary: fc.array(
      fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), headerText(60)),
      { maxLength: 12 },
    ),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom(90, 120).map((n) =>
      Array.from({ length: n }, (_, i) => [`x-filler-${i}`, "v"] as [string, string])
    ),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(8_000, 40_000, 60_000).map((n) =>
      [["x-big", "b".repeat(n)]] as [
        string,
        string,
      ][]
    ),
    weight: 1,
  },
);

/** A request fetch can send: a body under hostile headers. */
export function fetchInput(t: ConnectTenant): fc.Arbitrary<FetchInput> {
  return fc.record({
    body: connectBody(t.agent_id),
    auth: authorization(t),
    origin: origin(t),
    contentType,
    correlation: fc.option(correlationId, { nil: undefined }),
    forwarded: fc.option(forwardedFor, { nil: undefined }),
    extra: extraHeaders,
    method: fc.oneof(
      { arbitrary: fc.constant("POST"), weight: 20 },
      { arbitrary: fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"), weight: 1 },
    ),
  }).map((r) => {
    const headers: [string, string][] = [];
    if (r.auth.auth !== undefined) headers.push(["authorization", r.auth.auth]);
    // A publishable key is sent from its page's origin most of the time, as a browser would.
    if (r.origin !== undefined) headers.push(["origin", r.origin]);
    if (r.contentType !== undefined) headers.push(["content-type", r.contentType]);
    if (r.correlation !== undefined) headers.push(["x-correlation-id", r.correlation]);
    if (r.forwarded !== undefined) headers.push(["x-forwarded-for", r.forwarded]);
    headers.push(...r.extra);
    const hasBody = r.method !== "GET" && r.method !== "HEAD";
    const headBytes = headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
    return {
      overLimits: headBytes > 60_000 || headers.length > 100,
      via: "fetch" as const,
      note: `${r.body.note}; ${r.auth.pk ? "pk" : "sk/other"} auth; ${r.method}`,
      method: r.method,
      path: CONNECT_PATH,
      headers,
      body: hasBody ? r.body.bytes : undefined,
    };
  });
}

/** A request written raw, for what fetch refuses to send. */
export function rawInput(t: ConnectTenant): fc.Arbitrary<RawInput> {
  const body = JSON.stringify({ agent_id: t.agent_id });
  const len = enc.encode(body).length;
  const head = (lines: string[], method = "POST", target = CONNECT_PATH, version = "HTTP/1.1") =>
    `${method} ${target} ${version}\r\nHost: 127.0.0.1\r\n${
      lines.map((l) => l + "\r\n").join("")
    }\r\n`;
  const auth = `Authorization: Bearer ${t.sk}`;
  const ct = "Content-Type: application/json";
  const req = (
    note: string,
    text: string | Uint8Array,
    after: RawInput["after"] = "keep",
    framing = false,
  ): RawInput => ({
    via: "raw",
    note,
    bytes: typeof text === "string" ? enc.encode(text) : text,
    after,
    framing,
  });
  return fc.oneof(
    // Content-Length lies.
    fc.tuple(
      fc.integer({ min: 1, max: 60_000 }),
      fc.constantFrom("half", "close") as fc.Arbitrary<
        "half" | "close"
      >,
    ).map(([extra, after]) =>
      req(
        `Content-Length ${extra} more than sent, then ${after}`,
        head([auth, ct, `Content-Length: ${len + extra}`]) + body,
        after,
      )
    ),
    fc.integer({ min: 0, max: Math.max(0, len - 1) }).map((n) =>
      req(`Content-Length ${n} of ${len} bytes`, head([auth, ct, `Content-Length: ${n}`]) + body)
    ),
    fc.constantFrom(65_537, 1_000_000, 2 ** 53).map((n) =>
      req(`Content-Length ${n} declared`, head([auth, ct, `Content-Length: ${n}`]) + body, "half")
    ),
    fc.constantFrom(
      "-1",
      "abc",
      "1e3",
      "0x10",
      " 12",
      "18446744073709551616",
      `${len}, ${len + 1}`,
    ).map((v) =>
      req(`Content-Length "${v}"`, head([auth, ct, `Content-Length: ${v}`]) + body, "keep", true)
    ),
    fc.constant(req(
      "two different Content-Lengths",
      head([auth, ct, `Content-Length: ${len}`, `Content-Length: ${len + 5}`]) + body,
      "keep",
      true,
    )),
    fc.constant(req(
      "Content-Length and Transfer-Encoding",
      head([auth, ct, `Content-Length: 3`, "Transfer-Encoding: chunked"]) +
        `${len.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
      "keep",
      true,
    )),
    fc.constantFrom("gzip", "chunked, gzip", "identity", "xchunked").map((te) =>
      req(
        `Transfer-Encoding: ${te}`,
        head([auth, ct, `Transfer-Encoding: ${te}`]) + body,
        "half",
        true,
      )
    ),
    // Chunked bodies: a fine one, one over the limit, bad chunk sizes.
    fc.constant(req(
      "chunked body",
      head([auth, ct, "Transfer-Encoding: chunked"]) +
        `${len.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    )),
    fc.constantFrom(70_000, 300_000).map((n) =>
      req(
        `chunked body of ${n} bytes`,
        head([auth, ct, "Transfer-Encoding: chunked"]) +
          `${(8192).toString(16)}\r\n${"x".repeat(8192)}\r\n`.repeat(Math.ceil(n / 8192)) +
          "0\r\n\r\n",
      )
    ),
    fc.constantFrom("zz", "-5", "ffffffffffffffffff", "").map((size) =>
      req(
        `chunk size "${size}"`,
        head([auth, ct, "Transfer-Encoding: chunked"]) + `${size}\r\n${body}\r\n0\r\n\r\n`,
        "half",
        true,
      )
    ),
    // Header blocks at and past the server's limits, control characters, raw non-ASCII bytes.
    fc.constantFrom(60_000, 64_000, 66_000, 200_000).map((n) =>
      req(
        `one header of ${n} bytes`,
        head([auth, ct, `Content-Length: ${len}`, `X-Big: ${"a".repeat(n)}`]) + body,
        "keep",
        n > 60_000,
      )
    ),
    fc.constantFrom(100, 124, 130, 500).map((n) =>
      req(
        `${n} headers`,
        head([
          auth,
          ct,
          `Content-Length: ${len}`,
          ...Array.from({ length: n }, (_, i) => `X-H${i}: v`),
        ]) + body,
        "keep",
        n > 120,
      )
    ),
    fc.tuple(
      fc.constantFrom("Authorization", "Origin", "X-Correlation-Id", "X-Forwarded-For", "X-A"),
      fc.constantFrom([0x01], [0x7f], [0x00], [0x0b], [0xe9], [0xff, 0xfe], [0xc3, 0xa9]),
    ).map(([name, bad]) => {
      const prefix = enc.encode(
        `POST ${CONNECT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n${ct}\r\nContent-Length: ${len}\r\n` +
          (name === "Authorization" ? "" : auth + "\r\n") + `${name}: Bearer sk_`,
      );
      const rest = enc.encode(`x\r\n\r\n${body}`);
      return req(
        `byte ${bad.map((b) => b.toString(16)).join(" ")} in ${name}`,
        new Uint8Array([...prefix, ...bad, ...rest]),
        "keep",
        bad[0] < 0x20 || bad[0] === 0x7f,
      );
    }),
    fc.constantFrom("\n", "\r", " \r\n").map((eol) =>
      req(
        `line ending ${JSON.stringify(eol)}`,
        head([auth, ct, `Content-Length: ${len}`]).replaceAll("\r\n", eol) + body,
        "keep",
        true,
      )
    ),
    fc.constant(req(
      "obsolete folded header",
      head([auth, ct, `Content-Length: ${len}`, "X-Folded: a", " b"]) + body,
      "keep",
      true,
    )),
    // Request lines: methods, targets and versions.
    fc.oneof(
      fc.constantFrom("FOO", "post", "BREW", "M-SEARCH", "PROPFIND", "CONNECT", "TRACE"),
      fc.stringMatching(/^[A-Z]{1,20}$/),
    ).map((m) =>
      req(`method ${m}`, head([auth, ct, `Content-Length: ${len}`], m) + body, "keep", true)
    ),
    fc.constantFrom(
      `http://127.0.0.1${CONNECT_PATH}`,
      `${CONNECT_PATH}?x=1&y=%00`,
      `${CONNECT_PATH}/`,
      "/api/v1//sessions.connect",
      "/api/v1/sessions%2Econnect",
      "/api/v1/../v1/sessions.connect",
      `${CONNECT_PATH}#frag`,
      "*",
      `/${"a".repeat(10_000)}`,
      `/${"a".repeat(70_000)}`,
    ).map((target) =>
      req(
        `target ${target.slice(0, 40)}`,
        head([auth, ct, `Content-Length: ${len}`], "POST", target) + body,
        "keep",
        true,
      )
    ),
    fc.constantFrom("HTTP/1.0", "HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "HTTX/1.1").map((v) =>
      req(
        `version ${v}`,
        head([auth, ct, `Content-Length: ${len}`], "POST", CONNECT_PATH, v) + body,
        "keep",
        true,
      )
    ),
    fc.constant(req(
      "Expect: 100-continue",
      head([auth, ct, `Content-Length: ${len}`, "Expect: 100-continue"]) + body,
    )),
    fc.constant({
      ...req(
        "two requests pipelined",
        head([auth, ct, `Content-Length: ${len}`]) + body +
          head([auth, ct, `Content-Length: ${len}`]) + body,
      ),
      responses: 2,
    }),
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) =>
      req("random bytes", b, "half", true)
    ),
    nastyString.map((s) =>
      req(
        "nasty Origin with a publishable key",
        head([`Authorization: Bearer ${t.pk}`, ct, `Content-Length: ${len}`, `Origin: ${s}`]) +
          body,
        "keep",
        true,
      )
    ),
  );
}

/** Any hostile connect request: mostly through fetch, a fifth written raw. */
export function connectInput(t: ConnectTenant): fc.Arbitrary<ConnectInput> {
  return fc.oneof(
    { arbitrary: fetchInput(t), weight: 4 },
    { arbitrary: rawInput(t), weight: 1 },
  );
}
