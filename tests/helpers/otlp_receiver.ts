// An OTLP/HTTP trace receiver for tests: a real HTTP server at /v1/traces that decodes what the
// OpenTelemetry exporter posts (OTLP's JSON encoding: ids in hex, times as nanosecond strings) and
// keeps every span, flattened, with its resource's service name.
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, string | number | boolean>;
  service: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces). */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Requests received and their headers (OTEL_EXPORTER_OTLP_HEADERS shows up here). */
  requests: Headers[];
  /** Request body bytes received, all told. */
  bytes: number;
  /** Resolves once `pred` holds for the spans received, or rejects after `ms`. */
  waitFor(pred: (spans: ReceivedSpan[]) => boolean, ms?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

function valueOf(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.doubleValue ?? "";
}

const attrs = (kvs: KeyValue[] = []) =>
  Object.fromEntries(kvs.map((a) => [a.key, valueOf(a.value)]));

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const requests: Headers[] = [];
  const received = { bytes: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (new URL(req.url).pathname !== "/v1/traces" || req.method !== "POST") {
      return new Response("not found", { status: 404 });
    }
    if (!(req.headers.get("content-type") ?? "").includes("json")) {
      return new Response("this receiver reads OTLP JSON", { status: 415 });
    }
    requests.push(req.headers);
    const raw = await req.arrayBuffer();
    received.bytes += raw.byteLength;
    // deno-lint-ignore no-explicit-any
    const body: any = JSON.parse(new TextDecoder().decode(raw));
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attrs(rs.resource?.attributes)["service.name"] ?? "");
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: attrs(s.attributes),
            service,
          });
        }
      }
    }
    return Response.json({});
  });
  return {
    endpoint: `http://127.0.0.1:${server.addr.port}`,
    spans,
    requests,
    get bytes() {
      return received.bytes;
    },
    async waitFor(pred, ms = 10_000) {
      const until = Date.now() + ms;
      while (!pred(spans)) {
        if (Date.now() > until) {
          throw new Error(`OTLP receiver: spans never matched (${spans.length} received)`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return spans;
    },
    close: () => server.shutdown(),
  };
}
