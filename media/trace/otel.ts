// The OpenTelemetry side of call traces: the official SDK, a batch processor with a bounded queue
// and the OTLP/HTTP exporter, which reads the standard OTEL_EXPORTER_OTLP_* variables itself
// (endpoint, headers, timeout: 10 s unless OTEL_EXPORTER_OTLP_TIMEOUT says otherwise).
// Loaded only through tracing.ts when an endpoint is configured. A collector that is down never
// touches a call: spans wait in the bounded queue (the oldest work is dropped past it) and a
// failed export is logged once, then dropped.
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
import {
  type ExportResult,
  ExportResultCode,
  W3CTraceContextPropagator,
} from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { logger } from "../../common/log.ts";
import type { TurnRecord } from "../call/turn_record.ts";
import { type PlannedSpan, planRequest, planTurn, type SpanAttributes } from "./span_plan.ts";
import type { CallTrace, CallTracer, EngineRequest } from "./call_trace.ts";

const log = logger("traces");

/** Spans waiting for export at most; past it the processor drops them (a call never waits). */
export const MAX_QUEUED_SPANS = 4096;
const BATCH = 512;
/** How often queued spans go out (the SDK's default is 5 s; a call's trace shows sooner). */
const EXPORT_EVERY_MS = 1000;
const EXPORT_TIMEOUT_MS = 10_000;
/** Engine requests held for a turn not yet over; a call that never ends a turn keeps no more. */
const MAX_WAITING_REQUESTS = 256;

/** The worker's tracer over OTLP/HTTP with JSON bodies (what this exporter package sends). */
export function openTracer(): CallTracer {
  const exporter = new LoggedOnce(new OTLPTraceExporter());
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: "voice-worker" })
    .merge(detectResources({ detectors: [envDetector] })); // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
  const provider = new TracerProvider({
    resource,
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize: MAX_QUEUED_SPANS,
        maxExportBatchSize: BATCH,
        scheduledDelayMillis: EXPORT_EVERY_MS,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  const tracer = provider.getTracer("voice-worker");
  return {
    startCall: (sessionId, attributes) => new OtelCallTrace(tracer, sessionId, attributes),
    // A failed export was logged (LoggedOnce); flushing or stopping never throws for it.
    flush: () => provider.forceFlush().catch(() => {}),
    shutdown: () => provider.shutdown().catch(() => {}),
  };
}

const propagator = new W3CTraceContextPropagator();

class OtelCallTrace implements CallTrace {
  readonly traceparent: string;
  readonly tracestate: string;
  private readonly span: Span;
  private readonly ctx: Context;
  private readonly traced = new Set<string>();
  /** Traced turns' times and contexts: an engine request's parent is the turn it falls in. */
  private readonly turns: { startMs: number; endMs: number; ctx: Context }[] = [];
  /** Engine requests that ended before the turn they serve was over. */
  private waiting: EngineRequest[] = [];
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly sessionId: string,
    attributes: SpanAttributes,
  ) {
    this.span = tracer.startSpan("call", {
      kind: SpanKind.SERVER,
      startTime: Date.now(),
      attributes: { "voice.session_id": sessionId, ...attributes },
    }, ROOT_CONTEXT);
    this.ctx = trace.setSpan(ROOT_CONTEXT, this.span);
    const carrier: Record<string, string> = {};
    propagator.inject(this.ctx, carrier, { set: (c, k, v) => (c[k] = v) });
    this.traceparent = carrier.traceparent ?? "";
    this.tracestate = carrier.tracestate ?? "";
  }

  turnOver(record: TurnRecord | undefined): void {
    if (!record || this.ended || this.traced.has(record.turn_id)) return;
    this.traced.add(record.turn_id);
    const plan = planTurn(record, this.sessionId);
    const turn = this.open(plan.turn, this.ctx);
    const turnCtx = trace.setSpan(this.ctx, turn);
    for (const step of plan.steps) this.open(step, turnCtx).end(step.endMs);
    turn.end(plan.turn.endMs);
    this.turns.push({ startMs: plan.turn.startMs, endMs: plan.turn.endMs, ctx: turnCtx });
    const waiting = this.waiting;
    this.waiting = [];
    for (const r of waiting) this.engineRequest(r);
  }

  engineRequest(r: EngineRequest): void {
    if (this.ended) return;
    const turn = this.turns.findLast((t) => r.startMs >= t.startMs && r.startMs <= t.endMs);
    if (!turn) {
      this.waiting.push(r);
      if (this.waiting.length > MAX_WAITING_REQUESTS) this.waiting.shift();
      return;
    }
    this.emit(r, turn.ctx);
  }

  private emit(r: EngineRequest, parent: Context): void {
    const p = planRequest(r, this.sessionId);
    const span = this.tracer.startSpan(p.name, {
      kind: SpanKind.CLIENT,
      startTime: p.startMs,
      attributes: p.attributes,
    }, parent);
    if (r.outcome === "failed") span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(p.endMs);
  }

  end(status: string, reason: string, turns: readonly TurnRecord[]): void {
    if (this.ended) return;
    for (const t of turns) this.turnOver(t);
    for (const r of this.waiting.splice(0)) this.emit(r, this.ctx); // in no turn: the call's
    this.ended = true;
    this.span.setAttributes({ "voice.status": status, "voice.end_reason": reason });
    if (status === "failed") this.span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
    this.span.end(Date.now());
  }

  private open(p: PlannedSpan, parent: Context): Span {
    return this.tracer.startSpan(
      p.name,
      { startTime: p.startMs, attributes: p.attributes },
      parent,
    );
  }
}

/** The exporter, its failures logged once per outage (a collector down would log every second). */
class LoggedOnce implements SpanExporter {
  private failing = false;
  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS && !this.failing) {
        this.failing = true;
        log.warn("traces could not be exported; dropping them until the collector answers", {
          spans: spans.length,
          cause: result.error?.message,
        });
      } else if (result.code === ExportResultCode.SUCCESS && this.failing) {
        this.failing = false;
        log.info("traces are exported again");
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
