// The first greeting on a phone call (issue 35): from the caller's INVITE at the worker to the
// first packet of the greeting's audio at the caller, on a freshly started worker (its first
// call: engines, VAD, synthesis voice and brain connection all cold) and on a warm one (the calls
// after it), p50 and p99, with the wait broken into its steps so the figures say where it goes:
//   - INVITE → 200 OK (what the caller hears as ringing), and 200 OK → first audio (dead air on
//     a line already answered: what the caller hears as a bot that does not speak);
//   - INVITE → the brain's socket open, socket open → SessionStart, SessionStart → the brain's
//     Greeting (the brain's own time: BENCH_GREETING_THINK_MS), Greeting → first audio (the
//     greeting's synthesis, the answer if it is still to come, RTP).
// The phone is bench/harness/sip_dial.ts (raw SIP over UDP and μ-law RTP, one clock); the brain a
// raw WebSocket brain in this process noting when each frame arrives; the worker a real
// media/main.ts with the local engines, restarted for each fresh sample.
//
// BENCH_GREETING_BASELINE: another checkout (the code before the change, e.g. made with
// `git archive c9f02ce | tar -x -C /tmp/greet_before` and `node_modules` linked into it); its worker
// runs in the same run, fresh starts alternating with this checkout's, so the machine's other
// load falls on both alike.
//
// Run: deno run -A bench/first_greeting.ts   (also `deno task bench first_greeting`; ~2 min)
// Environment: BENCH_GREETING_FRESH (fresh worker starts per checkout, 5), BENCH_GREETING_WARM
//              (warm calls after each first call, 4), BENCH_GREETING_THINK_MS (0),
//              BENCH_GREETING_BASELINE (unset: this checkout only), BENCH_GREETING_JSON.
import { makeTenant, startTestApi } from "../tests/helpers/api_server.ts";
import { rawBrain } from "../tests/helpers/raw_brain.ts";
import { freeUdpPort } from "../tests/helpers/sipp.ts";
import { connectSession } from "./harness/session.ts";
import { HERE, startBenchWorker } from "./harness/worker.ts";
import { percentile } from "./harness/stats.ts";
import { dialForGreeting } from "./harness/sip_dial.ts";

const FRESH = Number(Deno.env.get("BENCH_GREETING_FRESH") ?? 5);
const WARM = Number(Deno.env.get("BENCH_GREETING_WARM") ?? 4);
const THINK_MS = Number(Deno.env.get("BENCH_GREETING_THINK_MS") ?? 0);
const BASELINE = Deno.env.get("BENCH_GREETING_BASELINE");
const GREETING = "Hello, thank you for calling the hotel desk. How can I help you today?";

/** When the brain saw each session's socket open, its SessionStart, and sent its Greeting. */
const seen = new Map<string, { open: number; start?: number; greeted?: number }>();
const brain = rawBrain(async (call) => {
  const s = { open: performance.now() } as { open: number; start?: number; greeted?: number };
  seen.set(call.sessionId, s);
  await call.next("session_start");
  s.start = performance.now();
  if (THINK_MS > 0) await new Promise((r) => setTimeout(r, THINK_MS));
  call.send("greeting", { text: GREETING });
  s.greeted = performance.now();
});
const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
const api = await startTestApi({}, { node: false });
const tenant = await makeTenant(api, "bench", { brain_url: served.url });

interface Sample {
  tree: string;
  kind: "fresh" | "warm";
  invite_to_ok: number;
  ok_to_audio: number;
  invite_to_brain_open: number;
  brain_open_to_session_start: number;
  session_start_to_greeting: number;
  greeting_to_audio: number;
  invite_to_audio: number;
}
const samples: Sample[] = [];
const failures: string[] = [];

async function oneCall(tree: string, kind: Sample["kind"], sipPort: number): Promise<void> {
  const s = await connectSession(api, tenant);
  const token = s.headers.Authorization.replace(/^Bearer /, "");
  const t = await dialForGreeting(sipPort, token);
  const b = seen.get(s.sessionId);
  if (t.ok === undefined || t.firstAudio === undefined || !b?.start || !b.greeted) {
    failures.push(`${tree} ${kind}: ${JSON.stringify({ ...t, brain: b })}`);
    return;
  }
  samples.push({
    tree,
    kind,
    invite_to_ok: t.ok - t.invite,
    ok_to_audio: t.firstAudio - t.ok,
    invite_to_brain_open: b.open - t.invite,
    brain_open_to_session_start: b.start - b.open,
    session_start_to_greeting: b.greeted - b.start,
    greeting_to_audio: t.firstAudio - b.greeted,
    invite_to_audio: t.firstAudio - t.invite,
  });
}

async function freshNode(tree: string, root: string): Promise<void> {
  const sipPort = await freeUdpPort();
  const worker = await startBenchWorker(api.db.url, {
    root,
    env: { SIP_PORT: String(sipPort), LOG_LEVEL: "warn" },
  });
  try {
    await oneCall(tree, "fresh", sipPort);
    for (let i = 0; i < WARM; i++) await oneCall(tree, "warm", sipPort);
  } finally {
    await worker.stop();
  }
}

const trees: [string, string][] = [
  ["this", HERE],
  ...BASELINE ? [["baseline", BASELINE]] as [string, string][] : [],
];
try {
  for (let i = 0; i < FRESH; i++) {
    for (const [tree, root] of i % 2 ? [...trees].reverse() : trees) await freshNode(tree, root);
  }
} finally {
  await served.shutdown();
  await api.close();
}

const STEPS: (keyof Sample)[] = [
  "invite_to_audio",
  "invite_to_ok",
  "ok_to_audio",
  "invite_to_brain_open",
  "brain_open_to_session_start",
  "session_start_to_greeting",
  "greeting_to_audio",
];
const ms = (x: number) => x.toFixed(0).padStart(6);
console.log(
  `\nfirst greeting on SIP calls: ${FRESH} fresh starts × (1 + ${WARM} warm calls), ` +
    `brain think ${THINK_MS} ms; p50 / p99 in ms`,
);
console.log(
  `${"step".padEnd(30)}${
    trees.map(([t]) => `${t} fresh`.padStart(18) + `${t} warm`.padStart(18)).join("")
  }`,
);
for (const step of STEPS) {
  const cells = trees.flatMap(([tree]) =>
    (["fresh", "warm"] as const).map((kind) => {
      const xs = samples.filter((s) => s.tree === tree && s.kind === kind).map((s) =>
        s[step] as number
      );
      return xs.length
        ? `${ms(percentile(xs, 50))} / ${ms(percentile(xs, 99))}`.padStart(18)
        : "-".padStart(18);
    })
  );
  console.log(`${step.padEnd(30)}${cells.join("")}`);
}
if (failures.length) console.log(`\nfailed calls:\n${failures.join("\n")}`);
const json = Deno.env.get("BENCH_GREETING_JSON");
if (json) await Deno.writeTextFile(json, JSON.stringify({ samples, failures }, null, 2));
Deno.exit(failures.length ? 1 : 0);
