// Reading the session record for display: turns (the contract in the worker's turn record) read
// defensively, since old sessions and echo calls have none or fewer fields, plus formatting.

export const STEP_MARKS = [
  "typed_text",
  "speech_ended",
  "end_of_turn",
  "final_requested",
  "final_text",
  "user_turn_sent",
  "first_unit",
  "first_audio",
  "done",
] as const;
export type Mark = typeof STEP_MARKS[number];

/**
 * The figures of a turn, each with the words the console shows and what it measures. After
 * recognition (which overlaps them), four steps chain the caller's end of speech (the start of the
 * silence that ended the turn, read from the audio) to the first bot audio the worker sent; they
 * add up to the figure after them.
 */
export const LATENCIES = [
  [
    "recognition",
    "Recognition",
    "the recogniser's own time for the final text, inside end of turn or to brain",
  ],
  ["end_of_turn", "End of turn", "silence waited for before the turn was judged over"],
  ["to_brain", "To brain", "end of turn to the user turn sent to the brain"],
  ["brain", "Brain", "user turn sent to the brain's first unit"],
  ["synthesis", "Synthesis", "first unit to its first audio sent"],
  [
    "release",
    "Release",
    "a speculative turn: its end of turn to the held reply's first audio sent (the brain and " +
    "synthesis ran inside the end-of-turn window; its chain is end of turn + release)",
  ],
  [
    "end_to_first_audio",
    "End of speech → first audio sent",
    "the caller's end of speech to the first bot audio the worker sent (the four steps)",
  ],
  // The same wait measured at the caller (the page or the caller simulator reports it): the
  // worker's figure plus the network, jitter buffer and playout the caller really waited through.
  [
    "heard_at_caller",
    "End of speech → first audio heard",
    "the same wait measured by the page or caller simulator from the audio it sent and received: " +
    "the worker's figure plus network, jitter buffer and playout",
  ],
] as const;
/**
 * A typed turn's wait, the typed text reaching the worker to the first bot audio sent: shown in
 * the end-of-speech column, marked typed, since a typed turn has no speech to end.
 */
export const TYPED_WAIT = "typed_to_first_audio";
export type Latency = typeof LATENCIES[number][0] | typeof TYPED_WAIT;

export interface UnitView {
  unit_id: string;
  text: string;
  /** The part the caller heard, a prefix of `text` when the worker reports one. */
  heard: string;
  /** What was never played: struck when the caller cut it off, greyed otherwise. */
  rest: string;
  cut_off: boolean;
}

export interface TurnView {
  turn_id: string;
  trigger: string;
  user_text: string | null;
  started_at: Date | null;
  marks: Partial<Record<Mark, number>>;
  latency_ms: Partial<Record<Latency, number>>;
  units: UnitView[];
  interrupted: boolean;
  /** Sent to the brain at the caller's pause: its steps are end of turn, then release. */
  speculative: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;

function numbers<K extends string>(v: unknown, keys: readonly K[]): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  if (!isObject(v)) return out;
  for (const k of keys) {
    const n = num(v[k]);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

function date(v: unknown): Date | null {
  if (v instanceof Date) return isNaN(v.getTime()) ? null : v;
  if (typeof v !== "string") return null;
  const d = new Date(v);
  return isNaN(d.getTime()) ? null : d;
}

export function readUnit(v: unknown, i: number): UnitView | undefined {
  if (!isObject(v)) return undefined;
  const text = str(v.text) ?? "";
  const cut_off = v.cut_off === true;
  // No `heard` means nothing says it was cut: treat the whole unit as heard unless cut off.
  const heard = str(v.heard) ?? (cut_off ? "" : text);
  const rest = text.startsWith(heard) ? text.slice(heard.length) : "";
  return { unit_id: str(v.unit_id) ?? `u${i + 1}`, text, heard, rest, cut_off };
}

/** The turns of `timings.turns`, skipping anything that is not a turn object. */
export function readTurns(raw: unknown): TurnView[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((t, i) => isObject(t) ? [readTurn(t, i)] : []);
}

function readTurn(t: Record<string, unknown>, i: number): TurnView {
  return {
    turn_id: str(t.turn_id) ?? `#${i + 1}`,
    trigger: str(t.trigger) ?? "",
    user_text: str(t.user_text) ?? null,
    started_at: date(t.started_at),
    marks: numbers(t.marks, STEP_MARKS),
    latency_ms: numbers(t.latency_ms, [...LATENCIES.map(([k]) => k), TYPED_WAIT]),
    units: (Array.isArray(t.units) ? t.units : []).map(readUnit).filter((u) => u !== undefined),
    interrupted: t.interrupted === true,
    speculative: t.speculative === true,
  };
}

/** Consecutive steps of a turn on its own time axis, from end of speech (or turn start). */
export interface Segment {
  step: string;
  from: number;
  ms: number;
}

/** The chain of a turn's timeline bar: each mark ends the step named beside it. */
const SEGMENTS = [
  ["end_of_turn", "end of turn"],
  ["user_turn_sent", "to brain"],
  ["first_unit", "brain"],
  ["first_audio", "synthesis"],
] as const;
/** A speculative turn's: the reply was made inside the window, so release follows end of turn. */
const SPECULATIVE_SEGMENTS = [
  ["end_of_turn", "end of turn"],
  ["first_audio", "release"],
] as const;

export function segments(turn: TurnView): Segment[] {
  // A typed turn's bar starts at its text's arrival (its first step, "to brain", is any wait for
  // the caller's utterance in progress).
  const origin = turn.marks.speech_ended ?? turn.marks.typed_text ?? 0;
  const out: Segment[] = [];
  let at = origin;
  for (const [mark, step] of turn.speculative ? SPECULATIVE_SEGMENTS : SEGMENTS) {
    const t = turn.marks[mark];
    if (t === undefined) continue;
    out.push({ step, from: at - origin, ms: Math.max(0, t - at) });
    at = Math.max(at, t);
  }
  return out;
}

export function formatMs(ms: number | undefined): string {
  return ms === undefined ? "—" : `${Math.round(ms)} ms`;
}

export function formatSeconds(seconds: number | undefined | null): string {
  if (seconds === undefined || seconds === null || !Number.isFinite(seconds)) return "—";
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const m = Math.floor(seconds / 60), s = Math.round(seconds % 60);
  return `${m} min ${String(s).padStart(2, "0")} s`;
}

export function formatTime(d: Date | null | undefined): string {
  if (!d) return "—";
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

/** Seconds between two instants, or the time since `from` when `to` is missing and `live`. */
export function secondsBetween(
  from: Date | null,
  to: Date | null,
  live = false,
): number | undefined {
  if (!from) return undefined;
  const end = to ?? (live ? new Date() : null);
  return end ? (end.getTime() - from.getTime()) / 1000 : undefined;
}

/** What the turns' "At" and the log's times count from, for their column titles. */
export const SINCE_CREATED = "seconds since the session was created (its Created time above)";

/** "+4.1 s"-style offset of `at` from the session's creation; "" when either is missing. */
export function sinceCreated(at: Date | null, created: Date | null, digits = 1): string {
  if (!at || !created) return "";
  return `+${((at.getTime() - created.getTime()) / 1000).toFixed(digits)}`;
}
