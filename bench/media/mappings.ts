// Where a process's resident memory lives, by mapping, from /proc/PID/smaps: to tell the C heap
// (brk `[heap]` and glibc's 64 MB thread arenas) from V8's heap, WASM memories (anonymous
// reservations of many GB, mostly unbacked) and files. `diffMappings` names the mappings that grew
// between two readings, which is how a soak's RSS slope is traced to its owner.
// Run against a live process: deno run -A bench/media/mappings.ts PID [SECONDS_BETWEEN]

import { setTimeout as sleep } from "node:timers/promises";

export interface Mapping {
  /** Start address, hex, as /proc prints it: a mapping's identity between readings. */
  start: string;
  /** Virtual size and resident size, kB. */
  sizeKb: number;
  rssKb: number;
  /** File path, `[heap]`, `[stack]`, or "" for an anonymous mapping. */
  name: string;
}

/** Every mapping of `pid` with its resident size; [] where the process is gone. */
export function readMappings(pid: number): Mapping[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(`/proc/${pid}/smaps`);
  } catch {
    return [];
  }
  const out: Mapping[] = [];
  let cur: Mapping | null = null;
  for (const line of text.split("\n")) {
    const head = line.match(/^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/);
    if (head) {
      cur = {
        start: head[1],
        sizeKb: Number((BigInt("0x" + head[2]) - BigInt("0x" + head[1])) / 1024n),
        rssKb: 0,
        name: head[3].trim(),
      };
      out.push(cur);
    } else if (cur && line.startsWith("Rss:")) {
      cur.rssKb = Number(line.split(/\s+/)[1]);
    }
  }
  return out;
}

/** glibc's thread arenas are 64 MB heaps aligned to 64 MB (HEAP_MAX_SIZE on 64-bit). */
const ARENA = 64n * 1024n * 1024n;

/** A coarse kind per mapping, by name, address and virtual size. */
export function kindOf(m: Mapping): string {
  if (m.name === "[heap]") return "C heap (brk)";
  if (m.name.startsWith("[")) return m.name;
  if (m.name !== "") return "files";
  // V8 reserves ≥ 8 GB (guard regions included) per WASM memory.
  if (m.sizeKb >= 4 * 1024 * 1024) return "WASM memory / big reservation";
  if (BigInt("0x" + m.start) % ARENA === 0n && m.sizeKb >= 1024 && m.sizeKb <= 65536) {
    return "C heap (thread arenas)";
  }
  return "anon other";
}

/** Resident kB per kind. */
export function byKind(ms: Mapping[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of ms) out.set(kindOf(m), (out.get(kindOf(m)) ?? 0) + m.rssKb);
  return out;
}

/** Mappings whose resident size changed most from `a` to `b` (new mappings count from 0). */
export function diffMappings(a: Mapping[], b: Mapping[], top = 15) {
  const before = new Map(a.map((m) => [m.start, m.rssKb]));
  return b.map((m) => ({ ...m, grewKb: m.rssKb - (before.get(m.start) ?? 0) }))
    .sort((x, y) => Math.abs(y.grewKb) - Math.abs(x.grewKb)).slice(0, top);
}

if (import.meta.main) {
  const pid = Number(Deno.args[0]);
  const every = Number(Deno.args[1] ?? 60);
  const first = readMappings(pid);
  let prev = first;
  for (let i = 1;; i++) {
    await sleep(every * 1000);
    const now = readMappings(pid);
    if (now.length === 0) break;
    const kinds = [...byKind(now)].map(([k, kb]) =>
      `${k} ${(kb / 1024).toFixed(1)} (${((kb - (byKind(prev).get(k) ?? 0)) / 1024).toFixed(1)})`
    );
    console.log(`[${i * every} s] MB by kind (change): ${kinds.join("; ")}`);
    for (const m of diffMappings(prev, now, 6).filter((m) => m.grewKb !== 0)) {
      console.log(
        `   ${m.start} size ${(m.sizeKb / 1024).toFixed(1)} MB rss ${
          (m.rssKb / 1024).toFixed(1)
        } MB ${m.grewKb > 0 ? "+" : ""}${(m.grewKb / 1024).toFixed(2)} MB ${kindOf(m)} ${m.name}`,
      );
    }
    prev = now;
  }
  console.log("since the first reading:");
  for (const m of diffMappings(first, prev, 15)) {
    console.log(
      `   ${m.start} size ${(m.sizeKb / 1024).toFixed(1)} MB rss ${
        (m.rssKb / 1024).toFixed(1)
      } MB ${m.grewKb > 0 ? "+" : ""}${(m.grewKb / 1024).toFixed(2)} MB ${kindOf(m)} ${m.name}`,
    );
  }
}
