// `deno task fuzz`: hostile input on every surface, bench-sized (docs/limits.md lists the limits
// it runs into). Prints, per surface: inputs, refusals by code, 5xx, unhandled rejections,
// crashes, RSS before and after, wall time; exits 1 when any property failed.
//
//   deno task fuzz                        # 100,000 inputs across the surfaces
//   deno task fuzz --runs 5000            # fewer (or FUZZ_RUNS=5000)
//   deno task fuzz --surface offer,brain  # some surfaces only
//   deno task fuzz --seed 7               # another sample (default 1; runs are reproducible)
//
// Surfaces and their share of the runs:
//   connect      30%  sessions.connect over HTTP: bodies, headers, raw requests (API in process)
//   offer         4%  the worker's POST offer / PATCH candidates (a worker process)
//   rtvi         31%  RtviSession fed directly
//   rtvi-live   1.5%  the same messages over a real data channel into a worker process
//   brain        34%  brain frames into the worker's decoding path (a Conversation in process)
//   brain-live        brain frames over a real WebSocket into a worker process (1 call per 2,500
//                     runs, at least 4)
// Every worker process is this repository's media/main.ts with the local speech engines; the
// database is DATABASE_URL's PostgreSQL (a fresh database each) or the embedded PGlite.
import { parseArgs } from "node:util";
import { setQuiet } from "../../common/log.ts";
import { formatTally, type Tally } from "./tally.ts";
import { installGuard } from "./guard.ts";
import { fuzzConnect } from "./surfaces/connect.ts";
import { fuzzOffer } from "./surfaces/offer.ts";
import { fuzzRtviDirect, fuzzRtviLive } from "./surfaces/rtvi.ts";
import { FuzzBrain, fuzzBrainDirect, fuzzBrainLive } from "./surfaces/brain.ts";
import { startStack } from "./stack.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string" },
    surface: { type: "string" },
    seed: { type: "string" },
  },
});

const runs = Number(values.runs ?? Deno.env.get("FUZZ_RUNS") ?? 100_000);
const seed = Number(values.seed ?? 1);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error("usage: deno task fuzz [--runs N] [--surface a,b] [--seed S]");
  Deno.exit(2);
}
const SURFACES = ["connect", "offer", "rtvi", "rtvi-live", "brain", "brain-live"];
const wanted = values.surface ? values.surface.split(",").map((s) => s.trim()) : SURFACES;
const unknown = wanted.filter((s) => !SURFACES.includes(s));
if (unknown.length) {
  console.error(`unknown surface ${unknown.join(", ")}; known: ${SURFACES.join(", ")}`);
  Deno.exit(2);
}

installGuard();
setQuiet(true);
const share = (f: number, min = 1) => Math.max(min, Math.round(runs * f));
const results: Tally[] = [];
const started = performance.now();
console.log(
  `fuzz: ${runs.toLocaleString("en-US")} runs, seed ${seed}, surfaces ${wanted.join(", ")}`,
);
console.log(
  `database: ${Deno.env.get("DATABASE_URL") ? "PostgreSQL (DATABASE_URL)" : "embedded PGlite"}`,
);

async function run(name: string, fn: () => Promise<Tally>) {
  if (!wanted.includes(name)) return;
  console.log(`\n▶ ${name} ...`);
  const t = await fn();
  results.push(t);
  console.log(formatTally(t));
  const saved = await t.saveFindings();
  if (saved) console.log(`  findings in full: ${saved}`);
}

await run("connect", () => fuzzConnect(share(0.30), seed));
await run("offer", () => fuzzOffer(share(0.04), seed));
await run("rtvi", () => fuzzRtviDirect(share(0.31), seed));
await run("brain", () => fuzzBrainDirect(share(0.34), seed));
if (wanted.includes("rtvi-live") || wanted.includes("brain-live")) {
  // One worker for both live samples: the echo agent for RTVI, the fuzzer's brain for frames.
  const brain = new FuzzBrain();
  const stack = await startStack({ brainUrl: brain.url });
  try {
    await run("rtvi-live", () => fuzzRtviLive(share(0.015, 20), seed, { stack }));
    await run(
      "brain-live",
      () => fuzzBrainLive(Math.max(4, Math.round(runs / 2500)), seed, { stack, brain }),
    );
  } finally {
    await stack.close();
    await brain.close();
  }
}

const total = results.reduce((n, t) => n + t.inputs, 0);
const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log("\n══ summary");
console.log(
  `${"surface".padEnd(58)}${pad("inputs", 9)}${pad("5xx", 6)}${pad("unhandled", 11)}${
    pad("crashes", 9)
  }${pad("violations", 12)}${pad("wall s", 8)}`,
);
for (const t of results) {
  const v = [...t.violations.values()].reduce((a, b) => a + b, 0);
  console.log(
    `${t.surface.slice(0, 57).padEnd(58)}${pad(t.inputs, 9)}${pad(t.fiveXX, 6)}${
      pad(t.unhandled, 11)
    }${pad(t.crashes, 9)}${pad(v, 12)}${pad((t.wallMs / 1000).toFixed(0), 8)}`,
  );
}
console.log(
  `total ${total.toLocaleString("en-US")} inputs in ${
    ((performance.now() - started) / 1000).toFixed(0)
  } s`,
);
const failed = results.filter((t) => t.failed);
if (failed.length) {
  console.log(`\nFAILED: ${failed.map((t) => t.surface).join("; ")}`);
  Deno.exit(1);
}
Deno.exit(0);
