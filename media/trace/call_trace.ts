// What a call and the worker see of tracing (types only: tracing.ts and otel.ts both use them,
// and otel.ts must not import tracing.ts, which imports it).
import type { TurnRecord } from "../call/turn_record.ts";

/** A span's attributes (OpenTelemetry's primitive values). */
export type SpanAttributes = Record<string, string | number | boolean>;

/** One request to a speech engine, as the call saw it (wall clock, ms since the epoch). */
export interface EngineRequest {
  leg: "synthesis";
  /** The engine that answered (the last one asked, after any fallback); absent if none did. */
  engine?: string;
  startMs: number;
  /** Its first audio. */
  firstMs?: number;
  endMs: number;
  characters: number;
  /** `ok`: all of it came; `cancelled`: the caller cut it off; `failed`: no engine could. */
  outcome: "ok" | "cancelled" | "failed";
}

/** One call's trace, as the call sees it (otel.ts makes it). */
export interface CallTrace {
  /** W3C Trace Context of the call's span, for SessionStart (the brain's spans join it). */
  readonly traceparent: string;
  readonly tracestate: string;
  /** A turn played out or was cut off: its span and its steps' spans. */
  turnOver(record: TurnRecord | undefined): void;
  /** A speech engine's request ended: a span under the turn it served (by time), else the call. */
  engineRequest(request: EngineRequest): void;
  /** The call ended: turns not yet traced, then the call's span. */
  end(status: string, reason: string, turns: readonly TurnRecord[]): void;
}

/** What starts call traces: one per worker, made on the first traced call. */
export interface CallTracer {
  startCall(sessionId: string, attributes: SpanAttributes): CallTrace;
  /** Exports what is queued (tests, a worker's drain); never needed by a call. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}
