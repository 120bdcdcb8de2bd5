// A scenario file (YAML or JSON): the steps of a call a brain must get through, for CI. Parsed
// and checked before any call is made, so a typo is a usage error, not a failure mid-call.
// expect_reply's `until` left out is settled here: `started` just before an interrupt (which
// talks over the reply), else `finished` (the bot done speaking, as a person waits for).
//
//   name: the example brain
//   steps:
//     - expect_reply: "example brain"           # the greeting, heard to its end
//     - say: what is the weather like today     # spoken; `wav: file.wav` plays a file
//     - expect_reply: { pattern: "you said", within_ms: 15000 }
//     - expect_action: { type: transcript }
//     - type: tell me a story                   # sent as the client library's sendText does
//     - expect_reply: lighthouse                # before an interrupt: met as it starts playing
//     - interrupt: { after_ms: 1500, say: stop }  # speaks over the reply 1.5 s into its audio
//     - wait: 500
//     - expect_config: { tts: { voice: VOICE_ANANYA } }
//     - type: bye
//     - expect_end: { reason: "goodbye" }
import { parse as parseYaml } from "yaml";
import { dirname, isAbsolute, join } from "node:path";

/** What the caller does: speak a text, play a WAV, or type a text. */
export type Utterance = { say: string } | { wav: string } | { type: string };

export type Step =
  | { kind: "say"; text: string }
  | { kind: "wav"; path: string }
  | { kind: "type"; text: string }
  | { kind: "wait"; ms: number }
  | { kind: "interrupt"; afterMs: number; what: Utterance }
  /**
   * `finished`: met once the bot has finished speaking and the caller heard the pattern (the
   * default, except before an interrupt); `started`: met as soon as the units that started
   * playing read as the pattern, the reply still playing.
   */
  | { kind: "expect_reply"; pattern: RegExp; withinMs?: number; until: ReplyUntil }
  | { kind: "expect_action"; type: string; data?: unknown; withinMs?: number }
  | { kind: "expect_config"; config: Record<string, unknown>; withinMs?: number }
  | { kind: "expect_end"; reason?: RegExp; status?: string; withinMs?: number };

export type ReplyUntil = "finished" | "started";

export interface Scenario {
  name: string;
  config?: Record<string, unknown>;
  init?: Record<string, unknown>;
  steps: Step[];
}

export class ScenarioError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Reads and checks a scenario file; WAV paths are taken relative to it. */
export async function readScenario(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    throw new ScenarioError(`cannot read scenario ${path}: ${(err as Error).message}`);
  }
  const name = path.split("/").pop()!.replace(/\.(ya?ml|json)$/, "");
  return parseScenario(text, { name, dir: dirname(path), json: path.endsWith(".json") });
}

/** A scenario from its text; throws ScenarioError naming the first bad step. */
export function parseScenario(
  text: string,
  o: { name?: string; dir?: string; json?: boolean } = {},
): Scenario {
  let doc: unknown;
  try {
    doc = o.json ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ScenarioError(
      `the scenario is not ${o.json ? "JSON" : "YAML"}: ${(err as Error).message}`,
    );
  }
  if (!isObject(doc)) throw new ScenarioError("a scenario is an object with `steps`");
  for (const k of Object.keys(doc)) {
    if (!["name", "config", "init", "steps"].includes(k)) {
      throw new ScenarioError(`unknown scenario key "${k}" (name, config, init, steps)`);
    }
  }
  for (const k of ["config", "init"] as const) {
    if (doc[k] !== undefined && !isObject(doc[k])) {
      throw new ScenarioError(`${k} must be an object`);
    }
  }
  if (!Array.isArray(doc.steps) || doc.steps.length === 0) {
    throw new ScenarioError("`steps` must be a list of at least one step");
  }
  const dir = o.dir ?? ".";
  const steps = doc.steps.map((s, i) => {
    try {
      return parseStep(s, dir);
    } catch (err) {
      throw new ScenarioError(`step ${i + 1}: ${(err as Error).message}`);
    }
  });
  // A person waits for the bot to finish before talking, unless they mean to talk over it.
  steps.forEach((s, i) => {
    if (s.kind === "expect_reply" && s.until === undefined) {
      s.until = steps[i + 1]?.kind === "interrupt" ? "started" : "finished";
    }
  });
  return {
    name: typeof doc.name === "string" ? doc.name : o.name ?? "scenario",
    config: doc.config as Record<string, unknown> | undefined,
    init: doc.init as Record<string, unknown> | undefined,
    steps,
  };
}

const KINDS = [
  "say",
  "wav",
  "type",
  "wait",
  "interrupt",
  "expect_reply",
  "expect_action",
  "expect_config",
  "expect_end",
];

function text(v: unknown, what: string): string {
  if (typeof v !== "string" || v.trim() === "") throw new Error(`${what} needs some text`);
  return v.trim();
}

function ms(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw new Error(`${what} must be a number of milliseconds ≥ 0`);
  }
  return v;
}

function pattern(v: unknown, what: string): RegExp {
  const p = text(v, what);
  try {
    return new RegExp(p, "i");
  } catch (err) {
    throw new Error(`${what} is not a regular expression: ${(err as Error).message}`);
  }
}

function within(o: Record<string, unknown>): number | undefined {
  return o.within_ms === undefined ? undefined : ms(o.within_ms, "within_ms");
}

function checkKeys(o: Record<string, unknown>, allowed: string[], step: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) {
      throw new Error(`${step}: unknown key "${k}" (${allowed.join(", ")})`);
    }
  }
}

function parseStep(raw: unknown, dir: string): Step {
  if (!isObject(raw) || Object.keys(raw).length !== 1) {
    throw new Error(`a step is an object with one of ${KINDS.join(", ")}`);
  }
  const [kind, v] = Object.entries(raw)[0];
  const wavPath = (p: unknown) => {
    const path = text(p, "wav");
    return isAbsolute(path) ? path : join(dir, path);
  };
  switch (kind) {
    case "say":
      return { kind, text: text(v, "say") };
    case "wav":
      return { kind, path: wavPath(v) };
    case "type":
      return { kind, text: text(v, "type") };
    case "wait":
      return { kind, ms: ms(v, "wait") };
    case "interrupt": {
      if (!isObject(v)) throw new Error("interrupt is { after_ms, say | wav | type }");
      checkKeys(v, ["after_ms", "say", "wav", "type"], "interrupt");
      const what: Utterance[] = [];
      if (v.say !== undefined) what.push({ say: text(v.say, "say") });
      if (v.wav !== undefined) what.push({ wav: wavPath(v.wav) });
      if (v.type !== undefined) what.push({ type: text(v.type, "type") });
      if (what.length !== 1) throw new Error("interrupt needs exactly one of say, wav, type");
      return { kind, afterMs: ms(v.after_ms ?? 0, "after_ms"), what: what[0] };
    }
    case "expect_reply": {
      // `until` left out is settled by the step that follows (parseScenario).
      const until = undefined as unknown as ReplyUntil;
      if (typeof v === "string") return { kind, pattern: pattern(v, "expect_reply"), until };
      if (!isObject(v)) {
        throw new Error("expect_reply is a pattern or { pattern, within_ms, until }");
      }
      checkKeys(v, ["pattern", "within_ms", "until"], kind);
      if (v.until !== undefined && v.until !== "finished" && v.until !== "started") {
        throw new Error(
          `until is "finished" (the default) or "started", not ${JSON.stringify(v.until)}`,
        );
      }
      return {
        kind,
        pattern: pattern(v.pattern, "pattern"),
        withinMs: within(v),
        until: (v.until as ReplyUntil | undefined) ?? until,
      };
    }
    case "expect_action":
      if (typeof v === "string") return { kind, type: text(v, "expect_action") };
      if (!isObject(v)) throw new Error("expect_action is a type or { type, data, within_ms }");
      checkKeys(v, ["type", "data", "within_ms"], kind);
      return { kind, type: text(v.type, "type"), data: v.data, withinMs: within(v) };
    case "expect_config": {
      if (!isObject(v)) throw new Error("expect_config is part of a config, e.g. { tts: {...} }");
      const { within_ms: _, ...config } = v;
      if (Object.keys(config).length === 0) throw new Error("expect_config names no setting");
      return { kind, config, withinMs: within(v) };
    }
    case "expect_end": {
      const o = v === null || v === true ? {} : v;
      if (!isObject(o)) throw new Error("expect_end is { reason, status, within_ms } or null");
      checkKeys(o, ["reason", "status", "within_ms"], kind);
      return {
        kind,
        reason: o.reason === undefined ? undefined : pattern(o.reason, "reason"),
        status: o.status === undefined ? undefined : text(o.status, "status"),
        withinMs: within(o),
      };
    }
    default:
      throw new Error(`unknown step "${kind}" (${KINDS.join(", ")})`);
  }
}

/** One line naming a step, for the conversation and the JUnit report. */
export function describeStep(s: Step): string {
  const u = (w: Utterance) =>
    "say" in w ? `say "${w.say}"` : "wav" in w ? `wav ${w.wav}` : `type "${w.type}"`;
  const lim = (n?: number) => n === undefined ? "" : ` within ${n} ms`;
  switch (s.kind) {
    case "say":
      return `say "${s.text}"`;
    case "wav":
      return `wav ${s.path}`;
    case "type":
      return `type "${s.text}"`;
    case "wait":
      return `wait ${s.ms} ms`;
    case "interrupt":
      return `interrupt ${s.afterMs} ms into the reply: ${u(s.what)}`;
    case "expect_reply":
      return `expect reply /${s.pattern.source}/${s.until === "started" ? " as it starts" : ""}${
        lim(s.withinMs)
      }`;
    case "expect_action":
      return `expect action ${s.type}${s.data === undefined ? "" : ` ${JSON.stringify(s.data)}`}${
        lim(s.withinMs)
      }`;
    case "expect_config":
      return `expect config ${JSON.stringify(s.config)}${lim(s.withinMs)}`;
    case "expect_end":
      return `expect end${s.status ? ` ${s.status}` : ""}${
        s.reason ? ` /${s.reason.source}/` : ""
      }${lim(s.withinMs)}`;
  }
}

/** Whether `actual` holds everything in `expected` (objects by key, other values equal). */
export function contains(actual: unknown, expected: unknown): boolean {
  if (isObject(expected)) {
    return isObject(actual) && Object.entries(expected).every(([k, v]) => contains(actual[k], v));
  }
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length &&
      expected.every((v, i) => contains(actual[i], v));
  }
  return actual === expected;
}
