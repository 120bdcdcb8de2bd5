// Tracing is on exactly when an OTLP traces endpoint is configured by the standard variables, and
// the standard switches turn it off though one is.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { tracingConfigured } from "./tracing.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

Deno.test("tracing is on with an OTLP endpoint, and off without one or when switched off", () => {
  const base = "http://collector:4318";
  assertEquals(tracingConfigured(env({})), false);
  assertEquals(tracingConfigured(env({ OTEL_SERVICE_NAME: "voice" })), false);
  assertEquals(tracingConfigured(env({ OTEL_EXPORTER_OTLP_ENDPOINT: base })), true);
  assertEquals(
    tracingConfigured(env({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${base}/v1/traces` })),
    true,
  );
  assertEquals(
    tracingConfigured(env({ OTEL_EXPORTER_OTLP_ENDPOINT: base, OTEL_TRACES_EXPORTER: "none" })),
    false,
  );
  assertEquals(
    tracingConfigured(env({ OTEL_EXPORTER_OTLP_ENDPOINT: base, OTEL_SDK_DISABLED: "TRUE" })),
    false,
  );
});
