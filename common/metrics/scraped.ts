// Metrics whose values are read at scrape time from state kept elsewhere (a pacer's lateness
// histogram, an engine's counters), registered on a registry next to prom-client's own.
import type { Metric, Registry } from "prom-client";

/** A cumulative histogram as Prometheus exposes it: count at or below each upper bound. */
export interface HistogramSnapshot {
  /** Ascending upper bounds with the cumulative count at or below each (+Inf is `count`). */
  buckets: { le: number; count: number }[];
  count: number;
  sum: number;
}

/**
 * A histogram (no labels) whose buckets, sum and count `read()` gives at each scrape, for state
 * that already keeps its own distribution (observing every sample again would cost per sample).
 */
export function registerScrapedHistogram(
  registry: Registry,
  metric: { name: string; help: string; read: () => HistogramSnapshot },
): void {
  const { name, help } = metric;
  const get = () => {
    const s = metric.read();
    return {
      name,
      help,
      type: "histogram",
      aggregator: "sum",
      values: [
        ...s.buckets.map((b) => ({
          metricName: `${name}_bucket`,
          labels: { le: b.le },
          value: b.count,
        })),
        { metricName: `${name}_bucket`, labels: { le: "+Inf" }, value: s.count },
        { metricName: `${name}_sum`, labels: {}, value: s.sum },
        { metricName: `${name}_count`, labels: {}, value: s.count },
      ],
    };
  };
  // prom-client's registry takes any object with these members (as its cluster aggregation does).
  registry.registerMetric({ name, help, type: "histogram", get, reset() {} } as unknown as Metric);
}
