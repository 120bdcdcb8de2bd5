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
// A carrier's stream (Twilio's fake, tests/fakes/): from its voice webhook at the API to the
// first loud media message from the worker, split into webhook → stream open, stream open → the
// brain's socket, … → first audio. A carrier answered the call before its webhook: there is no
// ringing to hide work in, so its figures show what the worker's warm-up does for a fresh node.
//
// BENCH_GREETING_BASELINE: another checkout (the code before the change, e.g. made with
// `git archive c9f02ce | tar -x -C /tmp/greet_before` and `node_modules` linked into it); its worker
// runs in the same run, fresh starts alternating with this checkout's, so the machine's other
// load falls on both alike.
//
// Run: deno run -A bench/first_greeting.ts   (also `deno task bench first_greeting`; ~2 min)
// Environment: BENCH_GREETING_FRESH (fresh worker starts per checkout and path, 5),
//              BENCH_GREETING_PATHS ("sip,twilio"), BENCH_GREETING_WARM
//              (warm calls after each first call, 4), BENCH_GREETING_THINK_MS (0),
//              BENCH_GREETING_BASELINE (unset: this checkout only), BENCH_GREETING_JSON.
import { makeTenant, startTestApi } from "../tests/helpers/api_server.ts";
import { rawBrain } from "../tests/helpers/raw_brain.ts";
import { freeUdpPort } from "../tests/helpers/sipp.ts";
import { TWILIO } from "../tests/helpers/stream_phone_call.ts";
import { dialThroughFakeTwilio, twilioCall } from "../tests/fakes/twilio_media_stream.ts";
import { startFakeTelephonyRest } from "../tests/fakes/telephony_rest.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import { rms } from "../caller/wav.ts";
import { BOT_LEVEL } from "../caller/turn_latency.ts";
import { connectSession } from "./harness/session.ts";
import { HERE, startBenchWorker } from "./harness/worker.ts";
import { percentile } from "./harness/stats.ts";
import { dialForGreeting } from "./harness/sip_dial.ts";

const FRESH = Number(Deno.env.get("BENCH_GREETING_FRESH") ?? 5);
const WARM = Number(Deno.env.get("BENCH_GREETING_WARM") ?? 4);
const THINK_MS = Number(Deno.env.get("BENCH_GREETING_THINK_MS") ?? 0);
const BASELINE = Deno.env.get("BENCH_GREETING_BASELINE");
const PATHS = (Deno.env.get("BENCH_GREETING_PATHS") ?? "sip,twilio").split(",") as Path[];
const GREETING = "Hello, thank you for calling the hotel desk. How can I help you today?";
type Path = "sip" | "twilio";

/** When the brain saw each session's socket open, its SessionStart, and sent its Greeting. */
interface Seen {
  session: string;
  open: number;
  start?: number;
  greeted?: number;
}
const seen: Seen[] = [];
const brain = rawBrain(async (call) => {
  const s: Seen = { session: call.sessionId, open: performance.now() };
  seen.push(s);
  await call.next("session_start");
  s.start = performance.now();
  if (THINK_MS > 0) await new Promise((r) => setTimeout(r, THINK_MS));
  call.send("greeting", { text: GREETING });
  s.greeted = performance.now();
});
const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
const rest = startFakeTelephonyRest({ twilio: TWILIO, plivo: { authId: "MA0", authToken: "x" } });
const TELEPHONY = {
  TWILIO_ACCOUNT_SID: TWILIO.accountSid,
  TWILIO_AUTH_TOKEN: TWILIO.authToken,
  TWILIO_API_URL: rest.url,
};
const api = await startTestApi({}, { node: false, telephony: loadTelephonySettings(TELEPHONY) });
const tenant = await makeTenant(api, "bench", { brain_url: served.url });

interface Sample {
  tree: string;
  path: Path;
  kind: "fresh" | "warm";
  steps: Record<string, number>;
}
const samples: Sample[] = [];
const failures: string[] = [];

/** The brain's side of the call whose socket opened after `since`, once it has greeted. */
const brainSide = (since: number) => seen.find((b) => b.open > since && b.greeted);

/** The brain's steps, from `from` (the INVITE, or the stream's opening) to the first audio. */
function brainSteps(b: Seen, from: number, firstAudio: number, label: string) {
  return {
    [`${label}_to_brain_open`]: b.open - from,
    brain_open_to_session_start: b.start! - b.open,
    session_start_to_greeting: b.greeted! - b.start!,
    greeting_to_audio: firstAudio - b.greeted!,
  };
}

async function sipCall(sipPort: number): Promise<Record<string, number> | string> {
  const s = await connectSession(api, tenant);
  const t = await dialForGreeting(sipPort, s.headers.Authorization.replace(/^Bearer /, ""));
  const b = seen.find((x) => x.session === s.sessionId && x.greeted);
  if (t.ok === undefined || t.firstAudio === undefined || !b) return JSON.stringify(t);
  return {
    invite_to_audio: t.firstAudio - t.invite,
    invite_to_ok: t.ok - t.invite,
    ok_to_audio: t.firstAudio - t.ok,
    ...brainSteps(b, t.invite, t.firstAudio, "invite"),
  };
}

async function twilioStreamCall(): Promise<Record<string, number> | string> {
  const call = twilioCall(TWILIO.accountSid);
  rest.calls.add(call.callSid);
  const hook = `${api.url}/api/v1/telephony/twilio/${tenant.agent_id}`;
  const webhook = performance.now();
  const stream = await dialThroughFakeTwilio(hook, TWILIO.authToken, call);
  const open = performance.now();
  try {
    let first: number | undefined;
    while (first === undefined && performance.now() < webhook + 20_000) {
      first = stream.bot.find((c) => rms(c.pcm) > BOT_LEVEL)?.at;
      await new Promise((r) => setTimeout(r, 5));
    }
    const b = brainSide(webhook);
    if (first === undefined || !b) return "no greeting heard";
    return {
      webhook_to_audio: first - webhook,
      webhook_to_stream_open: open - webhook,
      stream_open_to_audio: first - open,
      ...brainSteps(b, open, first, "stream_open"),
    };
  } finally {
    await stream.hangUp().catch(() => {});
  }
}

async function freshNode(tree: string, root: string, path: Path): Promise<void> {
  const sipPort = await freeUdpPort();
  const worker = await startBenchWorker(api.db.url, {
    root,
    env: { SIP_PORT: String(sipPort), LOG_LEVEL: "warn", ...TELEPHONY },
  });
  try {
    for (let i = 0; i <= WARM; i++) {
      const r = path === "sip" ? await sipCall(sipPort) : await twilioStreamCall();
      const kind = i === 0 ? "fresh" : "warm";
      if (typeof r === "string") failures.push(`${tree} ${path} ${kind}: ${r}`);
      else samples.push({ tree, path, kind, steps: r });
      // The worker's BYE or the stream's close settles before the next call.
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await worker.stop();
  }
}

const trees: [string, string][] = [["this", HERE]];
if (BASELINE) trees.push(["baseline", BASELINE]);
try {
  for (let i = 0; i < FRESH; i++) {
    for (const path of PATHS) {
      for (const [tree, root] of i % 2 ? [...trees].reverse() : trees) {
        await freshNode(tree, root, path);
      }
    }
  }
} finally {
  await served.shutdown();
  await api.close();
  await rest.close();
}

const ms = (x: number) => x.toFixed(0).padStart(5);
const kinds = trees.flatMap(([t]) => (["fresh", "warm"] as const).map((k) => [t, k] as const));
for (const path of PATHS) {
  const ofPath = samples.filter((s) => s.path === path);
  if (!ofPath.length) continue;
  console.log(
    `\nfirst greeting, ${path}: ${FRESH} fresh worker starts × (1 + ${WARM} warm calls), ` +
      `brain think ${THINK_MS} ms; p50 / p99 in ms`,
  );
  console.log(`${"step".padEnd(30)}${kinds.map(([t, k]) => `${t} ${k}`.padStart(16)).join("")}`);
  for (const step of Object.keys(ofPath[0].steps)) {
    const cells = kinds.map(([tree, kind]) => {
      const xs = ofPath.filter((s) => s.tree === tree && s.kind === kind).map((s) => s.steps[step]);
      return (xs.length ? `${ms(percentile(xs, 50))} /${ms(percentile(xs, 99))}` : "-").padStart(
        16,
      );
    });
    console.log(`${step.padEnd(30)}${cells.join("")}`);
  }
}
if (failures.length) console.log(`\nfailed calls:\n${failures.join("\n")}`);
const json = Deno.env.get("BENCH_GREETING_JSON");
if (json) await Deno.writeTextFile(json, JSON.stringify({ samples, failures }, null, 2));
Deno.exit(failures.length ? 1 : 0);
