// Whether calls are traced, and the one door to the OpenTelemetry SDK: otel.ts is imported
// dynamically, and only once an OTLP endpoint is configured (the standard variables), so a worker
// that exports no traces loads no OpenTelemetry module and builds no span (docs/traces.md).
import { logger } from "../../common/log.ts";
import type { CallTrace, CallTracer, SpanAttributes } from "./call_trace.ts";

export type { CallTrace, CallTracer, EngineRequest } from "./call_trace.ts";

const log = logger("traces");

/** How many times the SDK was loaded in this process (the no-cost-when-off proof reads it). */
export const tracingStats = { sdkLoads: 0 };

type Env = { get(key: string): string | undefined };

/** An endpoint is configured (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT). */
export function tracingConfigured(env: Env = Deno.env): boolean {
  if ((env.get("OTEL_TRACES_EXPORTER") ?? "").trim() === "none") return false;
  if ((env.get("OTEL_SDK_DISABLED") ?? "").trim().toLowerCase() === "true") return false;
  return !!(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") ||
    env.get("OTEL_EXPORTER_OTLP_ENDPOINT"));
}

let tracer: Promise<CallTracer | undefined> | undefined;

/** The worker's tracer, loaded on first use; undefined when no endpoint is configured. */
export function callTracer(env: Env = Deno.env): Promise<CallTracer | undefined> | undefined {
  if (!tracingConfigured(env)) return undefined;
  return tracer ??= import("./otel.ts").then((m) => {
    tracingStats.sdkLoads++;
    return m.openTracer();
  }).catch((err) => {
    // A broken install must not stop calls: they go on untraced.
    log.error("the OpenTelemetry SDK could not be loaded; calls go on untraced", {
      cause: (err as Error).message,
    });
    return undefined;
  });
}

/** A call's trace, or undefined (tracing off: nothing is loaded, nothing built). */
export async function startCallTrace(
  sessionId: string,
  attributes: SpanAttributes,
): Promise<CallTrace | undefined> {
  const t = callTracer();
  if (!t) return undefined;
  return (await t)?.startCall(sessionId, attributes);
}

/** Exports every span queued so far (no-op with tracing off). */
export async function flushTraces(): Promise<void> {
  await (await tracer)?.flush();
}

/** Exports what is queued, then stops the exporter (a worker's shutdown; tests). */
export async function shutdownTracing(): Promise<void> {
  const t = tracer;
  tracer = undefined;
  await (await t)?.shutdown();
}
