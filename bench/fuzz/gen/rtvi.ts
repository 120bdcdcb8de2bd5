// Hostile messages on the RTVI data channel: RTVI envelopes with random and wrong-typed fields,
// unknown types, random JSON, text that is not JSON, keep-alive look-alikes, signalling with odd
// values, messages at and past the 64 KiB limit, deep nests, and floods of one message.
import fc from "fast-check";
import { anyJson, bigString, type Json, nastyString, serialize } from "./json.ts";

export interface RtviInput {
  messages: string[];
  note: string;
}

const KNOWN = [
  "client-ready",
  "client-message",
  "send-text",
  "ui-event",
  "disconnect-bot",
  "append-to-context",
  "llm-function-call-result",
  "raw-audio",
  "dtmf",
  "ui-snapshot",
];

const type = fc.oneof(
  { arbitrary: fc.constantFrom<Json>(...KNOWN), weight: 8 },
  {
    arbitrary: fc.oneof(fc.string({ maxLength: 16 }), nastyString) as fc.Arbitrary<Json>,
    weight: 2,
  },
  { arbitrary: anyJson, weight: 1 },
);

const id = fc.oneof(
  { arbitrary: fc.stringMatching(/^[0-9a-f]{8}$/) as fc.Arbitrary<Json>, weight: 6 },
  {
    arbitrary: fc.constantFrom<Json>(undefined as unknown as Json, null, 0, "", "x".repeat(200)),
    weight: 1,
  },
  { arbitrary: anyJson, weight: 1 },
);

const data = fc.oneof(
  { arbitrary: anyJson, weight: 6 },
  {
    arbitrary: fc.record({
      t: fc.oneof(fc.string({ maxLength: 10 }), nastyString),
      d: anyJson,
    }) as fc.Arbitrary<Json>,
    weight: 3,
  },
  {
    arbitrary: fc.record({
      version: fc.constantFrom("2.1.0", "1.0.0", "99", ""),
      about: anyJson,
    }) as fc.Arbitrary<Json>,
    weight: 1,
  },
  { arbitrary: fc.constantFrom(70, 1000, 20_000).map((d) => `\u0001deep:[${d}`), weight: 1 },
  { arbitrary: bigString as fc.Arbitrary<Json>, weight: 1 },
);

/** One RTVI envelope, fields present, missing or of the wrong type. */
const envelope = fc.record({
  label: fc.oneof(
    { arbitrary: fc.constant<Json>("rtvi-ai"), weight: 10 },
    { arbitrary: fc.constantFrom<Json>("rtvi", "RTVI-AI", "", null, 1), weight: 1 },
  ),
  type,
  id,
  data,
  drop: fc.subarray(["label", "type", "id", "data"], { maxLength: 2 }),
}).map((e) => {
  const m: Record<string, Json> = { label: e.label, type: e.type, id: e.id, data: e.data };
  for (const k of e.drop) delete m[k];
  if (m.id === undefined) delete m.id;
  return serialize(m);
});

const signalling = fc.record({
  type: fc.constantFrom<Json>("signalling", "signaling"),
  message: fc.oneof(
    fc.record({
      type: fc.constantFrom<Json>("trackStatus", "renegotiate", "peerLeft", "x"),
      receiver_index: fc.oneof(fc.integer({ min: -1, max: 3 }), anyJson),
      enabled: fc.oneof(fc.boolean(), anyJson),
    }) as fc.Arbitrary<Json>,
    anyJson,
  ),
}).map((s) => serialize(s as Json));

/** One chat frame of any kind. */
export const rtviMessage: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: envelope, weight: 12 },
  { arbitrary: signalling, weight: 2 },
  { arbitrary: anyJson.map((v) => serialize(v)), weight: 2 },
  {
    arbitrary: fc.oneof(
      fc.constantFrom("ping", "ping: 1790000000000", "ping:", "pingpong", "PING", " ping", "{", ""),
      fc.string({ maxLength: 30 }),
      nastyString,
    ),
    weight: 2,
  },
  {
    // At and past the limit (65,536 bytes), with an id so an answer could name it.
    arbitrary: fc.constantFrom(65_400, 65_536, 65_537, 100_000, 1_000_000).map((n) => {
      const head =
        '{"label":"rtvi-ai","type":"client-message","id":"0000beef","data":{"t":"x","d":"';
      return head + "x".repeat(Math.max(0, n - head.length - 3)) + '"}}';
    }),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(1000, 30_000).map((d) =>
      `{"label":"rtvi-ai","type":"client-message","id":"0000dee9","data":${"[".repeat(d)}${
        "]".repeat(d)
      }}`
    ),
    weight: 1,
  },
);

/** What a page sends: a few frames, or (now and then) one frame many times as fast as it can. */
export const rtviInput: fc.Arbitrary<RtviInput> = fc.oneof(
  {
    arbitrary: fc.array(rtviMessage, { minLength: 1, maxLength: 12 }).map((messages) => ({
      messages,
      note: `${messages.length} messages`,
    })),
    weight: 100,
  },
  {
    arbitrary: fc.tuple(envelope, fc.constantFrom(60, 200, 1000)).map(([m, n]) => ({
      messages: Array.from({ length: n }, () => m),
      note: `flood of ${n}`,
    })),
    weight: 1,
  },
);
