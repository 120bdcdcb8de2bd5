// A V8 CPU profile of a worker's main thread, taken through its inspector (the worker runs with
// `--inspect=127.0.0.1:PORT`), and a print of where the time went by module and by function.
// Used by echo_calls.ts (BENCH_ECHO_PROFILE) and call_density.ts (BENCH_DENSITY_PROFILE).
import { Inspector } from "../harness/inspector.ts";

export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
  }[];
  samples?: number[];
  startTime: number;
  endTime: number;
}

export class Profiler {
  private constructor(readonly inspector: Inspector) {}

  static async connect(port: number): Promise<Profiler> {
    const inspector = await Inspector.connect(port);
    await inspector.call("Profiler.enable");
    await inspector.call("Profiler.setSamplingInterval", { interval: 500 });
    return new Profiler(inspector);
  }

  async start(): Promise<void> {
    await this.inspector.call("Profiler.start");
  }

  async stop(): Promise<CpuProfile> {
    return (await this.inspector.call("Profiler.stop")).profile as CpuProfile;
  }

  close(): void {
    this.inspector.close();
  }
}

/** Where a function lives, coarsely: the npm package (and werift's sub-package), or our folder. */
function moduleOf(url: string, name: string): string {
  if (!url) return name.startsWith("(") ? name : "native/builtin";
  const npm = url.match(/node_modules\/(?:\.deno\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)(.*)/);
  if (npm) {
    const sub = npm[1] === "werift" ? npm[2].match(/^\/lib\/([^/]+)\/src\/([^/]+)/) : null;
    return sub ? `werift/${sub[1]}/${sub[2]}` : npm[1];
  }
  if (url.startsWith("ext:") || url.startsWith("node:")) {
    return url.replace(/^ext:/, "").replace(/\/[^/]*$/, "");
  }
  if (url.startsWith("wasm:")) return "wasm";
  const ours = url.match(/\/(media|wasm|common|db|api)\/(.*?)(\.ts)?$/);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

export function printProfile(label: string, profile: CpuProfile): void {
  const self = new Map<number, number>();
  for (const s of profile.samples ?? []) self.set(s, (self.get(s) ?? 0) + 1);
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const nameOf = (node: CpuProfile["nodes"][number]) => {
    const f = node.callFrame;
    return `${f.functionName || "(anonymous)"} ${moduleOf(f.url, f.functionName)}:${
      f.lineNumber + 1
    }`;
  };
  const byFn = new Map<string, number>(), byModule = new Map<string, number>();
  for (const node of profile.nodes) {
    const n = self.get(node.id) ?? 0;
    if (!n) continue;
    const mod = moduleOf(node.callFrame.url, node.callFrame.functionName);
    const fn = nameOf(node);
    byFn.set(fn, (byFn.get(fn) ?? 0) + n);
    byModule.set(mod, (byModule.get(mod) ?? 0) + n);
  }
  // Inclusive: a function's own samples and its callees', counted once per stack even when the
  // function recurses (so the stage that owns the work shows, e.g. werift's sendRtp).
  const inclusive = new Map<string, number>();
  const walk = (id: number, onStack: Map<string, number>): number => {
    const node = byId.get(id);
    if (!node) return 0;
    let sum = self.get(id) ?? 0;
    const name = nameOf(node);
    onStack.set(name, (onStack.get(name) ?? 0) + 1);
    for (const c of node.children ?? []) sum += walk(c, onStack);
    onStack.set(name, onStack.get(name)! - 1);
    if (!onStack.get(name)) inclusive.set(name, (inclusive.get(name) ?? 0) + sum);
    return sum;
  };
  walk(profile.nodes[0].id, new Map());
  for (const skip of ["(root) (root):0", "(idle) (idle):0"]) inclusive.delete(skip);
  const top = (m: Map<string, number>, k: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, n]) =>
      `  ${(100 * n / total).toFixed(1).padStart(5)} %  ${name}`
    ).join("\n");
  const idle = (byModule.get("(idle)") ?? 0) / total;
  console.log(
    `\nCPU profile of the worker's main thread (${label}; ${total} samples, ` +
      `${(100 * idle).toFixed(1)} % idle), self time by module:\n${top(byModule, 18)}\n` +
      `by function:\n${top(byFn, 30)}\ninclusive (with callees) by function:\n` +
      top(inclusive, 120),
  );
}
