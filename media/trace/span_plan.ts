// The spans of one turn, planned from its record (turn_record.ts): the same marks the session record
// and the node's metrics read, so a trace and the console never disagree on a turn's steps. Pure
// data, no OpenTelemetry: otel.ts turns a plan into spans, and the tests read plans as they are.
import type { LatencyStep, TurnMark, TurnRecord } from "../call/turn_record.ts";
import { stepsOf } from "../call/turn_record.ts";
import type { EngineRequest, SpanAttributes } from "./call_trace.ts";

export type { SpanAttributes } from "./call_trace.ts";

export interface PlannedSpan {
  name: string;
  /** Wall clock, ms since the epoch. */
  startMs: number;
  endMs: number;
  attributes: SpanAttributes;
}

export interface TurnPlan {
  turn: PlannedSpan;
  /** Children of the turn's span. */
  steps: PlannedSpan[];
}

/** The steps that become spans, by their session-record names; end_to_first_audio is first_packet. */
const TRACED: readonly LatencyStep[] = [
  "end_of_turn",
  "recognition",
  "to_brain",
  "brain",
  "synthesis",
  "release",
];

/** Where the wait for the first audio packet begins: the caller's end of speech or typed text. */
const WAIT_FROM: readonly TurnMark[] = ["speech_ended", "typed_text"];

/** Span names: `turn`, and `turn.STEP` for each step (first_packet: the wait the caller feels). */
export const TURN_SPAN = "turn";
export const stepSpanName = (step: string) => `turn.${step}`;

/** The turn's span and one child per step whose two marks were set. */
export function planTurn(r: TurnRecord, sessionId: string): TurnPlan {
  const t0 = Date.parse(r.started_at);
  const m = r.marks;
  const at = (mark: TurnMark) => t0 + m[mark]!;
  const last = Math.max(0, ...Object.values(m).filter((v): v is number => v !== undefined));
  const engines = r.engines;
  const turn: PlannedSpan = {
    name: TURN_SPAN,
    startMs: t0,
    endMs: t0 + (m.done ?? last),
    attributes: {
      "voice.session_id": sessionId,
      "voice.turn_id": r.turn_id,
      "voice.turn.trigger": r.trigger,
      "voice.turn.interrupted": r.interrupted,
      "voice.turn.units": r.units.length,
      ...(engines.recognition ? { "voice.engine.recognition": engines.recognition } : {}),
      ...(engines.synthesis.length
        ? { "voice.engine.synthesis": engines.synthesis.join(",") }
        : {}),
      ...latencyAttributes(r),
    },
  };
  const steps: PlannedSpan[] = [];
  for (const [step, from, to] of stepsOf(r.speculative)) {
    if (!TRACED.includes(step) || m[from] === undefined || m[to] === undefined) continue;
    steps.push(stepSpan(step, at(from), at(to), r, sessionId));
  }
  if (m.first_audio !== undefined) {
    const from = WAIT_FROM.find((k) => m[k] !== undefined);
    steps.push(stepSpan("first_packet", from ? at(from) : t0, at("first_audio"), r, sessionId));
  }
  return { turn, steps };
}

function stepSpan(
  step: string,
  startMs: number,
  endMs: number,
  r: TurnRecord,
  sessionId: string,
): PlannedSpan {
  const engine = step === "recognition"
    ? r.engines.recognition
    : step === "synthesis"
    ? r.engines.synthesis[0]
    : undefined;
  return {
    name: stepSpanName(step),
    startMs,
    endMs: Math.max(startMs, endMs),
    attributes: {
      "voice.session_id": sessionId,
      "voice.turn_id": r.turn_id,
      ...(engine ? { "voice.engine": engine } : {}),
    },
  };
}

/** The record's latencies as attributes, so a backend can filter turns without the children. */
function latencyAttributes(r: TurnRecord): SpanAttributes {
  const out: SpanAttributes = {};
  for (const [step, ms] of Object.entries(r.latency_ms)) {
    if (ms !== undefined) out[`voice.latency_ms.${step}`] = ms;
  }
  return out;
}

/** A speech engine's request: `engine.LEG`, its engine, size, outcome and time to first audio. */
export function planRequest(r: EngineRequest, sessionId: string): PlannedSpan {
  return {
    name: `engine.${r.leg}`,
    startMs: r.startMs,
    endMs: Math.max(r.startMs, r.endMs),
    attributes: {
      "voice.session_id": sessionId,
      ...(r.engine ? { "voice.engine": r.engine } : {}),
      "voice.characters": r.characters,
      "voice.outcome": r.outcome,
      ...(r.firstMs !== undefined ? { "voice.first_audio_ms": r.firstMs - r.startMs } : {}),
    },
  };
}
