// The process's memory, from Deno itself. prom-client's default Node metrics are not used: under
// Deno its event-loop lag reads zero or NaN and its GC metrics stay empty.
import { Counter, Gauge, type Registry } from "prom-client";
import { releases } from "../freed_memory.ts";

export function registerProcessMetrics(registry: Registry): void {
  new Gauge({
    name: "voice_process_resident_memory_bytes",
    help: "Resident set size of this process (Deno.memoryUsage().rss).",
    registers: [registry],
    collect() {
      this.set(Deno.memoryUsage().rss);
    },
  });
  new Gauge({
    name: "voice_process_heap_used_bytes",
    help: "JavaScript heap in use in this process (Deno.memoryUsage().heapUsed).",
    registers: [registry],
    collect() {
      this.set(Deno.memoryUsage().heapUsed);
    },
  });
  new Counter({
    name: "voice_process_memory_releases_total",
    help:
      "Times this process gave freed malloc memory back to the system (common/freed_memory.ts).",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(releases.count);
    },
  });
  new Counter({
    name: "voice_process_memory_release_seconds_total",
    help: "Time the main thread spent giving freed malloc memory back to the system.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(releases.seconds);
    },
  });
}
