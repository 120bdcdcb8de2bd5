// `deno task test` after tests/setup.ts: the whole suite in two lanes side by side, then the few
// files that need the machine to themselves, closed by one summary line over all of them in
// `deno test`'s own shape (the line .ci/run adds up).
//
// Why lanes: most of the suite's time is whole calls waiting on real time (audio at 1x, browsers,
// SIP peers), not on the CPU, so two at once finish far sooner on CI's two cores. Each test file
// runs in a `deno test` process of its own (starting one costs ~0.2 s), taken from one queue by
// whichever lane is free, so the lanes stay even as files come and go. Processes, not
// `deno test --parallel`: the files of one process share its environment (the OTLP tests set
// OTEL_EXPORTER_OTLP_ENDPOINT, which every worker a test spawns inherits). Each file already has
// a database of its own (tests/helpers/database.ts) and free ports.
//
// The queue: one job for everything outside tests/ (a single `deno test` that finds those files
// itself and ignores the ones queued here, so a file this walk missed still runs), then each file
// under tests/. The type check is `deno check .`, once, before the lanes (which then run with
// --no-check): CI's static step has just run that same command, so there it is a cache hit, and
// it covers every test file and all they import.
//
//   deno run -A tests/run.ts            the whole suite
//   deno run -A tests/run.ts --list     only prints the jobs

/**
 * Files that must not share the machine, run one by one after the lanes: one loads the CPU on
 * purpose (a neighbour would be starved), the others bound what a busy host does to a call, so a
 * neighbour would change what they measure.
 */
export const SOLO = [
  // Spins two busy loops to show barge-in on a loaded node.
  "tests/barge_in_on_a_busy_host_holds_the_replys_late_unit_until_the_caller_is_done.test.ts",
  // Echo on the line: at most three pauses a call, and CI's busy host already gave two.
  "tests/a_phone_caller_whose_line_echoes_the_bot_back_never_makes_the_bot_interrupt_itself.test.ts",
  "tests/a_caller_who_talks_over_the_bot_on_an_echoing_line_is_still_heard.test.ts",
  // The test caller's pacing and first round trip, in milliseconds (failed beside a whole call).
  "caller/caller.test.ts",
];

/**
 * Files that rebuild web/dist (the browser tests, `deno task run`) are never run at the same
 * time: esbuild rewrites web/dist/call/main.js in place, and a page loading it mid-write fails.
 */
export function exclusiveGroup(path: string): string | undefined {
  if (
    path.startsWith("tests/browser/") || path.startsWith("tests/run_") ||
    path.startsWith("tests/a_second_run_")
  ) {
    return "web/dist";
  }
  return undefined;
}

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** What `deno test` takes for a test module: `test.ts`, `x_test.ts`, `x.test.ts` (and js, tsx…). */
const TEST_FILE = /(^|[._])test\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/** Every test file under `dir` (relative to the repository), sorted. */
export async function testFilesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string) => {
    for await (const e of Deno.readDir(`${ROOT}/${rel}`)) {
      const path = `${rel}/${e.name}`;
      if (e.isDirectory && e.name !== "node_modules" && !e.name.startsWith(".")) await walk(path);
      else if (e.isFile && TEST_FILE.test(e.name)) found.push(path);
    }
  };
  await walk(dir);
  return found.sort();
}

export interface Tally {
  passed: number;
  passedSteps: number;
  failed: number;
  failedSteps: number;
  ignored: number;
  ignoredSteps: number;
}

const ZERO: Tally = {
  passed: 0,
  passedSteps: 0,
  failed: 0,
  failedSteps: 0,
  ignored: 0,
  ignoredSteps: 0,
};

const SUMMARY =
  /^(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed(?: \((\d+) steps?\))?(?: \| (\d+) ignored(?: \((\d+) steps?\))?)?/;

/** The counts of a `deno test` summary line, or undefined when `line` is not one. */
export function parseSummary(line: string): Tally | undefined {
  // deno-lint-ignore no-control-regex
  const m = SUMMARY.exec(line.replace(/\x1b\[[0-9;]*m/g, ""));
  if (!m) return undefined;
  const n = (i: number) => Number(m[i] ?? 0);
  return {
    passed: n(2),
    passedSteps: n(3),
    failed: n(4),
    failedSteps: n(5),
    ignored: n(6),
    ignoredSteps: n(7),
  };
}

/** A summary line in `deno test`'s own shape. */
export function formatSummary(t: Tally, ok: boolean, seconds: number): string {
  const steps = (n: number) => (n ? ` (${n} step${n === 1 ? "" : "s"})` : "");
  const ignored = t.ignored || t.ignoredSteps
    ? ` | ${t.ignored} ignored${steps(t.ignoredSteps)}`
    : "";
  const time = `${Math.floor(seconds / 60)}m${Math.round(seconds % 60)}s`;
  return `${ok ? "ok" : "FAILED"} | ${t.passed} passed${steps(t.passedSteps)} | ${t.failed} ` +
    `failed${steps(t.failedSteps)}${ignored} (${time})`;
}

export function add(a: Tally, b: Tally): Tally {
  const out = { ...a };
  for (const k of Object.keys(ZERO) as (keyof Tally)[]) out[k] += b[k];
  return out;
}

interface Job {
  name: string;
  args: string[];
  group?: string;
}

interface Done {
  job: Job;
  ok: boolean;
  tally: Tally;
  seconds: number;
  /** A failed job's ERRORS section (at most ERROR_LINES lines), printed again at the end. */
  errors: string[];
}

/** How much of a failed job's ERRORS section is printed again at the end. */
const ERROR_LINES = 40;

/**
 * The lines from `deno test`'s " ERRORS " heading to its " FAILURES " heading, at most `max`:
 * why each test failed. With two lanes the first print is interleaved with the other lane's
 * output and far from the end of a long log, which is often all a CI page shows.
 */
export function errorsSection(lines: string[], max = ERROR_LINES): string[] {
  // deno-lint-ignore no-control-regex
  const plain = lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
  const start = plain.findIndex((l) => l.trim() === "ERRORS");
  if (start < 0) return plain.slice(-max);
  const end = plain.findIndex((l, i) => i > start && l.trim() === "FAILURES");
  const section = plain.slice(start + 1, end < 0 ? undefined : end).filter((l) => l.trim());
  return section.length > max
    ? [...section.slice(0, max), `… ${section.length - max} more lines in the lane's output above`]
    : section;
}

const running = new Set<Deno.ChildProcess>();

/** Runs `deno <job.args>`, printing each line as `[lane] line`; its summary line is its tally. */
async function run(job: Job, lane: string): Promise<Done> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: job.args,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  running.add(child);
  let tally: Tally | undefined;
  // The job's own lines, unprefixed, for errorsSection; bounded like a terminal's scrollback.
  const kept: string[] = [];
  const keep = (line: string) => {
    kept.push(line);
    if (kept.length > 2000) kept.splice(0, kept.length - 2000);
  };
  const relay = async (stream: ReadableStream<Uint8Array>, to: (line: string) => void) => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of stream) {
      const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        tally = parseSummary(line) ?? tally;
        keep(line);
        to(`[${lane}] ${line}`);
      }
    }
    if (rest) {
      keep(rest);
      to(`[${lane}] ${rest}`);
    }
  };
  const [status] = await Promise.all([
    child.status,
    relay(child.stdout, (l) => console.log(l)),
    relay(child.stderr, (l) => console.error(l)),
  ]);
  running.delete(child);
  // A job that ended without a summary (a module that failed to load, a crash) is one failure.
  const result = tally ?? { ...ZERO, failed: 1 };
  if (!status.success && result.failed === 0) result.failed = 1;
  return {
    job,
    ok: status.success,
    tally: result,
    seconds: (performance.now() - started) / 1000,
    errors: status.success ? [] : errorsSection(kept),
  };
}

/** Runs `jobs` on `lanes` lanes, each taking the next job whose group is not already running. */
async function runLanes(jobs: Job[], lanes: number): Promise<Done[]> {
  const queue = [...jobs];
  const busy = new Set<string>();
  const done: Done[] = [];
  const waiting: (() => void)[] = [];
  const lane = async (name: string) => {
    while (queue.length) {
      const i = queue.findIndex((j) => !j.group || !busy.has(j.group));
      if (i < 0) {
        // Only jobs of a group another lane is running are left: wait for it to finish one.
        await new Promise<void>((r) => waiting.push(r));
        continue;
      }
      const [job] = queue.splice(i, 1);
      if (job.group) busy.add(job.group);
      done.push(await run(job, name));
      if (job.group) busy.delete(job.group);
      waiting.splice(0).forEach((w) => w());
    }
  };
  await Promise.all(Array.from({ length: lanes }, (_, i) => lane(String(i + 1))));
  return done;
}

async function main(): Promise<number> {
  const started = performance.now();
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}/deno.json`));
  const excluded: string[] = config.test?.exclude ?? [];
  const test = ["test", "-A", "--no-check"];
  const files = await testFilesUnder("tests");
  const laned = files.filter((f) => !SOLO.includes(f));
  const jobs: Job[] = [
    // --ignore replaces deno.json's test.exclude, so it is repeated here.
    {
      name: "outside tests/",
      args: [...test, `--ignore=${[...new Set([...excluded, ...files, ...SOLO])].join(",")}`],
    },
    ...laned.map((f) => ({ name: f, args: [...test, f], group: exclusiveGroup(f) })),
  ];
  const solo: Job[] = SOLO.map((f) => ({ name: f, args: [...test, f] }));
  if (Deno.args.includes("--list")) {
    for (const j of jobs) {
      console.log(`lanes: ${j.name}${j.group ? ` (one at a time: ${j.group})` : ""}`);
    }
    for (const j of solo) console.log(`alone: ${j.name}`);
    return 0;
  }
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(sig, () => {
      for (const child of running) child.kill(sig);
      Deno.exit(130);
    });
  }

  const check = await new Deno.Command(Deno.execPath(), { args: ["check", "."], cwd: ROOT })
    .spawn().status;
  if (!check.success) {
    console.log(formatSummary({ ...ZERO, failed: 1 }, false, 0));
    console.error("deno check . failed: no test ran");
    return 1;
  }

  const results = await runLanes(jobs, 2);
  for (const job of solo) results.push(await run(job, "alone"));

  const total = results.reduce((t, r) => add(t, r.tally), ZERO);
  const failed = results.filter((r) => !r.ok);
  console.log();
  const slowest = [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10);
  console.log(
    `slowest: ${slowest.map((r) => `${r.job.name} ${r.seconds.toFixed(0)} s`).join(", ")}`,
  );
  if (failed.length) console.log("== why they failed");
  for (const r of failed) {
    console.log(`--- ${r.job.name}`);
    for (const line of r.errors) console.log(line);
  }
  for (const r of failed) console.log(`failed: ${r.job.name} (${r.tally.failed} failed)`);
  console.log(formatSummary(total, failed.length === 0, (performance.now() - started) / 1000));
  return failed.length ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main());
