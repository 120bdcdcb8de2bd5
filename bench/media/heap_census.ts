// What a worker's JavaScript heap holds, by constructor: a V8 heap snapshot taken through the
// worker's inspector (it runs with `--inspect=127.0.0.1:PORT`), reduced to a count and shallow
// size per (type, name). Two censuses a few minutes apart name the objects a soak accumulates
// (`diffCensus`): a per-call object that outlives its call shows as a count growing with calls.
// Used by soak.ts (SOAK_HEAP_CENSUS=1).
import { Inspector } from "../harness/inspector.ts";
import { setTimeout as sleep } from "node:timers/promises";

export interface Census {
  /** `type:name` → live objects and their shallow bytes. */
  counts: Map<string, { n: number; bytes: number }>;
  totalBytes: number;
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Takes a snapshot of the isolate behind the inspector on `port` and counts it (GC first). */
export async function heapCensus(port: number): Promise<Census> {
  const inspector = await Inspector.connect(port);
  const chunks: string[] = [];
  inspector.onEvent.set("HeapProfiler.addHeapSnapshotChunk", (p) => chunks.push(p.chunk as string));
  try {
    await inspector.call("HeapProfiler.enable");
    await inspector.call("HeapProfiler.collectGarbage");
    await inspector.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  } finally {
    inspector.close();
  }
  return countSnapshot(JSON.parse(chunks.join("")));
}

/**
 * Puts the worker's memory in a comparable state before a reading: a full GC (so array buffers
 * nobody holds are freed, whenever V8 would have got to them), then the worker's own release of
 * freed malloc memory (common/freed_memory.ts). What is resident after this is what is held.
 */
export async function settle(inspector: Inspector): Promise<void> {
  await inspector.call("HeapProfiler.collectGarbage");
  await sleep(500); // array buffers are freed by a sweeper after GC
  const module = new URL("../../common/freed_memory.ts", import.meta.url).href;
  await inspector.call("Runtime.evaluate", {
    expression: `import(${JSON.stringify(module)}).then((m) => m.releaseFreedMemory())`,
    awaitPromise: true,
  });
}

/** Count and shallow size per node type and name. */
export function countSnapshot(s: Snapshot): Census {
  const f = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const step = f.length, T = f.indexOf("type"), N = f.indexOf("name"), S = f.indexOf("self_size");
  const counts = new Map<string, { n: number; bytes: number }>();
  let totalBytes = 0;
  for (let i = 0; i < s.nodes.length; i += step) {
    const type = types[s.nodes[i + T]];
    // Strings are named by their content: one bucket for them all.
    const name = type === "string" || type === "concatenated string" || type === "sliced string"
      ? ""
      : s.strings[s.nodes[i + N]].slice(0, 80);
    const key = `${type}:${name}`;
    const c = counts.get(key) ?? { n: 0, bytes: 0 };
    c.n++;
    c.bytes += s.nodes[i + S];
    totalBytes += s.nodes[i + S];
    counts.set(key, c);
  }
  return { counts, totalBytes };
}

/** The buckets that grew most in bytes from `a` to `b`. */
export function diffCensus(a: Census, b: Census, top = 25) {
  const keys = new Set([...a.counts.keys(), ...b.counts.keys()]);
  return [...keys].map((k) => {
    const x = a.counts.get(k) ?? { n: 0, bytes: 0 }, y = b.counts.get(k) ?? { n: 0, bytes: 0 };
    return { key: k, n: y.n, dn: y.n - x.n, bytes: y.bytes, dBytes: y.bytes - x.bytes };
  }).sort((p, q) => q.dBytes - p.dBytes).slice(0, top);
}

/** A printable table of diffCensus. */
export function formatDiff(rows: ReturnType<typeof diffCensus>): string {
  return rows.map((r) =>
    `  ${(r.dBytes / 1024).toFixed(1).padStart(9)} kB  ${
      String(r.dn).padStart(7)
    } objects  (now ${r.n}, ${(r.bytes / 1024).toFixed(0)} kB)  ${r.key}`
  ).join("\n");
}
