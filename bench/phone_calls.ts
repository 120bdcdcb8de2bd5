// Phone calls over SIP through a real worker (media/main.ts with SIP_PORT, the local engines) and
// a scripted brain, with web calls through the same worker in the same run as the baseline.
//
// A phone call: SIPp 3.6 does the signalling (INVITE to the redirect server, 302, INVITE at the
// worker with the session token in the Request-URI, ACK, then answers the worker's BYE); a UDP socket
// beside it (tests/helpers/phone_caller.ts) is the phone's media: it waits for the greeting to
// end, says TURNS festival lines as μ-law RTP, each after the previous reply fell quiet, then
// presses # and the brain ends the call (the worker's BYE). A web call: the same lines through
// bench/media/density_callers.ts (the test caller over WebRTC, in its own process), reused as
// bench/media/call_density.ts runs it.
//
// Per level (N concurrent calls, call i dialling at i × 0.3 s), all on one worker process:
//   - SIP setup, from SIPp's message log (its own timestamps): the phone dials the number at the
//     control plane's redirect server, follows its 302 to the worker; INVITE → 302, the INVITE at
//     the worker → 200, and the first INVITE → 200 (what a trunk waits);
//   - end of speech → first bot audio at the peer: from the phone's RTP, the packet holding the
//     line's last voiced sample going out (± 10 ms: the phone's 20 ms send grid) to the first
//     received packet louder than BOT_LEVEL;
//   - worker CPU per call-second (the worker's process tree from /proc, bench/harness/proc.ts,
//     minus its idle rate over 3 s before the level) and RSS: peak during the level (VmHWM after
//     a reset) minus idle, per call;
//   - skipped frames: a phone line's pacer counts them (`skippedTicks` in the session log's
//     phone/line entry; the /stats and /metrics pacing figures hold web calls only). A level
//     holds when every line was answered and no frame was skipped.
//
// Run: deno run -A bench/phone_calls.ts   (also `deno task bench phone_calls`; ≤ ~6 min)
// Environment: BENCH_PHONE_LEVELS ("1,4,8,+": "+" steps up by BENCH_PHONE_STEP (8) while a level
//              holds, up to 48 calls, while BENCH_PHONE_BUDGET_S (300) lasts); the largest level
//              whose p99 is also ≤ BENCH_PHONE_MAX_P99_MS (1000, call_density's target) is printed
//              too; BENCH_PHONE_DIAL ("redirect", or "direct": a token from sessions.connect);
//              BENCH_WEB_LEVELS ("1,4"); BENCH_PHONE_TURNS (2); BENCH_PHONE_JSON (figures as JSON).
import { makeTenant, startTestApi } from "../tests/helpers/api_server.ts";
import { callerSpeechWav } from "../tests/helpers/audio.ts";
import { freeUdpPort, runSipp } from "../tests/helpers/sipp.ts";
import { followRedirect, inDialog, phoneInvite, XML_HEAD } from "../tests/helpers/sipp_scenario.ts";
import { PhoneCaller, ulawSpeech } from "../tests/helpers/phone_caller.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import { g711Decode } from "../media/phone/g711.ts";
import { rms } from "../caller/wav.ts";
import { BOT_LEVEL } from "../caller/turn_latency.ts";
import { loadAverage, treeCpuSeconds } from "./harness/proc.ts";
import { percentile } from "./harness/stats.ts";
import { startBenchWorker } from "./harness/worker.ts";
import { RssPeak } from "./harness/rss.ts";
import { connectSession } from "./harness/session.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { LineChild } from "./harness/line_child.ts";
import { voicedSpan } from "./media/density_callers.ts";
import type { DensityCallersConfig, DensityCallersResult } from "./media/density_callers.ts";

const levels = (name: string, dflt: string) =>
  (Deno.env.get(name) ?? dflt).split(",").filter(Boolean).map(Number);
const PHONE_SPEC = Deno.env.get("BENCH_PHONE_LEVELS") ?? "1,4,8,+";
const PHONE_LEVELS = PHONE_SPEC.split(",").filter((x) => x && x !== "+").map(Number);
/** "+": after the listed levels, step up by BENCH_PHONE_STEP while a level holds. */
const STEP_UP = PHONE_SPEC.split(",").includes("+");
const STEP = Number(Deno.env.get("BENCH_PHONE_STEP") ?? 8);
const BUDGET_S = Number(Deno.env.get("BENCH_PHONE_BUDGET_S") ?? 300);
const MAX_CALLS = 48; // under the worker's default capacity of 50
/** The largest level whose end of speech → first audio p99 is within this is reported too. */
const MAX_P99_MS = Number(Deno.env.get("BENCH_PHONE_MAX_P99_MS") ?? 1000);
const WEB_LEVELS = levels("BENCH_WEB_LEVELS", "1,4");
const TURNS = Number(Deno.env.get("BENCH_PHONE_TURNS") ?? 2);
const STAGGER_MS = 300;
/** "direct": phones dial the worker with a token from sessions.connect, skipping the redirect. */
const VIA_REDIRECT = (Deno.env.get("BENCH_PHONE_DIAL") ?? "redirect") !== "direct";
const LINES = [
  "i am looking for a cheap hotel near the airport",
  "can you book a table for two at eight tonight",
  "what time does the museum open on sunday",
].slice(0, TURNS);
const DIALLED = "+15550100";

// The brain: a greeting, a fixed reply to every turn, and on a phone call # ends it.
const brain = createBrain({
  onSessionStart: () => "Hello, this is the hotel desk. How can I help?",
  onTurn: () => "We have three hotels near the airport.",
  onDtmf(dtmf, session) {
    if (dtmf.digit === "#") session.end("caller_done");
  },
});
const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
// Calls at every level start from one SIPp source: the caps on calls not yet started are off.
const api = await startTestApi(
  { PENDING_SESSIONS_PER_TRUNK: "0", PENDING_SESSIONS_PER_SOURCE: "0" },
  { node: false },
);
const tenant = await makeTenant(api, "bench", { brain_url: served.url });
const sipPort = await freeUdpPort();
const worker = await startBenchWorker(api.db.url, {
  env: { SIP_PORT: String(sipPort), LOG_LEVEL: "warn" },
});
const workerPid = worker.pid;
const number = await api.admin("/api/v1/numbers.create", {
  number: DIALLED,
  agent_id: tenant.agent_id,
});
if (number.status !== 200) throw new Error(`numbers.create: ${JSON.stringify(number.body)}`);
const redirect = VIA_REDIRECT
  ? await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 })
  : undefined;

const treeCpu = () => treeCpuSeconds(workerPid);

/** A session's token (for a phone dialling the worker directly) and its web call parameters. */
async function connect() {
  const s = await connectSession(api, tenant);
  return { ...s, token: s.headers.Authorization.replace(/^Bearer /, "") };
}

const invite = (uri: string, cseq: number, rtpPort: number) =>
  phoneInvite(DIALLED, uri, cseq, [0, 101], {
    port: rtpPort,
    address: "127.0.0.1",
    fmtp: true,
    direction: "sendrecv",
  });

/**
 * The number dialled at the redirect server: 302 (ACKed on the INVITE's branch, three messages
 * back), then, as a phone follows a redirect (RFC 3261 section 8.1.3.4: same Call-ID and tags,
 * CSeq + 1), the INVITE at the Contact, the worker's address and the session token.
 */
const redirected = (rtpPort: number) =>
  followRedirect(DIALLED, (uri, cseq) => invite(uri, cseq, rtpPort));

/** The worker's 200 and our ACK; then the worker's BYE (after #), answered 200. */
const scenario = (first: string, cseq: number) =>
  `${XML_HEAD}<scenario name="bench-phone">${first}
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="to,wtag"/></action>
  </recv>
  <Reference variables="to"/>
  ${inDialog("ACK", cseq, DIALLED)}
  <recv request="BYE" timeout="240000"/>
  <send><![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0
]]></send>
</scenario>`;

/**
 * From SIPp's message log (`-trace_msg`, its own timestamps): first INVITE sent → 302 received
 * (the redirect server), the INVITE at the worker → its 200, and first INVITE → 200 (the whole
 * setup a trunk sees), in ms.
 */
export function setupTimes(
  messages: string,
): { redirect?: number; worker?: number; total?: number } {
  const out: { redirect?: number; worker?: number; total?: number } = {};
  let first: number | undefined, last: number | undefined, lastCseq: string | undefined;
  for (const b of messages.split(/^-{10,}\s*/m)) {
    const m = /^\d{4}-\d\d-\d\d\s+(\d\d):(\d\d):(\d\d(?:\.\d+)?)/.exec(b);
    if (!m) continue;
    const at = (Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3])) * 1000;
    if (/message sent[^\n]*\n+\s*INVITE /.test(b)) {
      // A retransmission is not a new INVITE: only a new CSeq starts one.
      const cseq = /CSeq:\s*(\d+)/.exec(b)?.[1];
      if (first === undefined) first = at;
      if (cseq !== lastCseq) {
        last = at;
        lastCseq = cseq;
      }
    }
    if (first === undefined) continue;
    if (/message received[^\n]*\n+\s*SIP\/2\.0 302/.test(b)) out.redirect ??= at - first;
    if (/message received[^\n]*\n+\s*SIP\/2\.0 200/.test(b) && out.total === undefined) {
      out.total = at - first;
      out.worker = at - last!;
    }
  }
  return out;
}

/** The session id inside the token the 302 carried (read, not verified: the worker verified it). */
function sessionOf(messages: string): string | undefined {
  const token = /;session=([\w-]+\.([\w-]+)\.[\w-]+)/.exec(messages)?.[2];
  if (!token) return undefined;
  const json = atob(token.replace(/-/g, "+").replace(/_/g, "/"));
  return JSON.parse(json).sid;
}

/** Per phone line: 8 kHz μ-law and the offset (ms) of its last voiced sample. */
const phoneLines = await Promise.all(LINES.map(async (text) => {
  const ulaw = await ulawSpeech(text);
  const pcm = g711Decode("PCMU", ulaw);
  // voicedSpan works on a 10 ms grid of 480 samples: give it 48 kHz-like indices by scaling.
  const up = new Int16Array(pcm.length * 6);
  for (let i = 0; i < up.length; i++) up[i] = pcm[Math.floor(i / 6)];
  return { ulaw, voicedEndMs: voicedSpan(up).end / 48 };
}));
const webLines = await Promise.all(LINES.map((t) => callerSpeechWav(t, 0.3)));

const loudAfter = (caller: PhoneCaller, since: number) =>
  caller.heard.find((h) =>
    h.at >= since && h.payloadType === 0 && rms(g711Decode("PCMU", h.payload)) > BOT_LEVEL
  )?.at;

/** Resolves once the bot has spoken since `since` and then been quiet for 600 ms. */
async function quietAfterSpeech(caller: PhoneCaller, since: number, ms = 30_000) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const spoke = loudAfter(caller, since);
    if (spoke !== undefined && performance.now() - 600 > spoke) {
      const last = caller.heard.filter((h) =>
        h.payloadType === 0 && rms(g711Decode("PCMU", h.payload)) > BOT_LEVEL
      ).at(-1)!.at;
      if (performance.now() - last >= 600) {
        return;
      }
    }
    await sleep(50);
  }
  throw new Error("the bot never spoke and fell quiet");
}

interface Setup {
  redirect?: number;
  worker?: number;
  total?: number;
}

interface PhoneOutcome {
  setup: Setup;
  latencyMs: (number | null)[];
  seconds: number;
  sessionId?: string;
  error?: string;
}

async function phoneCall(delayMs: number): Promise<PhoneOutcome> {
  await sleep(delayMs);
  const caller = await PhoneCaller.open();
  const started = performance.now();
  const out: PhoneOutcome = { setup: {}, latencyMs: [], seconds: 0 };
  let xml: string, port: number;
  if (VIA_REDIRECT) {
    [xml, port] = [scenario(redirected(caller.port), 2), redirect!.port];
  } else {
    const c = await connect();
    out.sessionId = c.sessionId;
    const uri = `sip:${DIALLED}@[remote_ip]:[remote_port];session=${c.token}`;
    [xml, port] = [scenario(invite(uri, 1, caller.port), 1), sipPort];
  }
  const sipp = runSipp(xml, port, DIALLED, "udp", ["-timeout", "240"]);
  try {
    await caller.start(30_000);
    await quietAfterSpeech(caller, started);
    for (const line of phoneLines) {
      const queued = performance.now();
      await caller.say(line.ulaw);
      const speechEnd = queued + 10 + line.voicedEndMs;
      try {
        await quietAfterSpeech(caller, speechEnd);
        out.latencyMs.push(loudAfter(caller, speechEnd)! - speechEnd);
      } catch {
        out.latencyMs.push(null);
      }
    }
    await caller.press("#");
  } catch (err) {
    out.error = String(err);
  } finally {
    const run = await sipp;
    if (run.code !== 0) out.error ??= `sipp exit ${run.code}: ${run.errors.slice(0, 300)}`;
    out.setup = setupTimes(run.messages);
    out.sessionId ??= sessionOf(run.messages);
    out.seconds = (performance.now() - started) / 1000;
    await caller.close();
  }
  return out;
}

/** Web calls through density_callers.ts (its own process), held until all played their lines. */
async function webCalls(n: number) {
  const calls = [];
  for (let i = 0; i < n; i++) {
    const c = await connect();
    calls.push({ endpoint: c.endpoint, headers: c.headers, lines: webLines });
  }
  const child = new LineChild(
    new URL("./media/density_callers.ts", import.meta.url).pathname,
    "@@density",
  );
  const config: DensityCallersConfig = {
    echo: false,
    calls,
    staggerMs: STAGGER_MS,
    echoPauseMs: 0,
    gapMs: 700,
  };
  child.send(JSON.stringify(config));
  await child.wait("scripted", 300_000);
  child.send("hangup");
  const result = await child.wait("result", 60_000) as unknown as DensityCallersResult;
  await child.close();
  return result.calls.map((c) => ({ latencyMs: c.latencyMs, seconds: c.seconds, error: c.error }));
}

async function skippedFrames(sessionIds: string[]): Promise<{ skipped: number; ticks: number }> {
  let skipped = 0, ticks = 0;
  for (const id of sessionIds) {
    for (let tries = 0; tries < 100; tries++) {
      const r = await api.admin("/api/v1/sessions.get", { session_id: id });
      // deno-lint-ignore no-explicit-any
      const line = r.body.log?.find((e: any) => e.source === "phone" && e.kind === "line");
      if (line) {
        skipped += line.data.skippedTicks;
        ticks += line.data.ticks;
        break;
      }
      await sleep(200);
    }
  }
  return { skipped, ticks };
}

interface Row {
  kind: "phone" | "web";
  n: number;
  /** Per call: INVITE → 302 at the redirect, INVITE → 200 at the worker, first INVITE → 200. */
  setup: Setup[];
  latency: number[];
  unanswered: number;
  errors: string[];
  cpuMsPerCallS: number;
  rssMiBPerCall: number;
  idleRssMiB: number;
  skipped?: number;
  ticks?: number;
  load: string;
}

async function level(kind: "phone" | "web", n: number): Promise<Row> {
  // Idle: the worker's own CPU rate and RSS with no call.
  await sleep(1000);
  const idle0 = treeCpu(), t0 = performance.now();
  await sleep(3000);
  const idleRate = (treeCpu() - idle0) / ((performance.now() - t0) / 1000);
  const rss = new RssPeak(workerPid);
  const idleRss = rss.idleSumKb;
  const cpu0 = treeCpu(), w0 = performance.now();
  const outcomes = kind === "phone"
    ? await Promise.all(Array.from({ length: n }, (_, i) => phoneCall(i * STAGGER_MS)))
    : await webCalls(n);
  // Torn down: the worker's CPU for the calls includes their ends.
  await sleep(1500);
  const wall = (performance.now() - w0) / 1000;
  const cpu = treeCpu() - cpu0 - idleRate * wall;
  const peak = rss.stop();
  const callSeconds = outcomes.reduce((s, o) => s + o.seconds, 0);
  const latency = outcomes.flatMap((o) => o.latencyMs).filter((x): x is number => x !== null);
  const row: Row = {
    kind,
    n,
    setup: kind === "phone" ? (outcomes as PhoneOutcome[]).map((o) => o.setup) : [],
    latency,
    unanswered: outcomes.reduce((s, o) => s + o.latencyMs.filter((x) => x === null).length, 0) +
      outcomes.filter((o) => o.latencyMs.length < LINES.length).length * LINES.length,
    errors: outcomes.map((o) => o.error).filter((e): e is string => !!e),
    cpuMsPerCallS: (cpu * 1000) / callSeconds,
    rssMiBPerCall: (peak - idleRss) / 1024 / n,
    idleRssMiB: idleRss / 1024,
    load: loadAverage(),
  };
  if (kind === "phone") {
    const ids = (outcomes as PhoneOutcome[]).map((o) => o.sessionId);
    Object.assign(row, await skippedFrames(ids.filter((id): id is string => !!id)));
    if (ids.some((id) => !id)) row.errors.push("a call's session id was not found");
  }
  return row;
}

const f1 = (x: number) => Number.isFinite(x) ? x.toFixed(1) : "–";
const f0 = (x: number) => Number.isFinite(x) ? x.toFixed(0) : "–";
/** "p50 / p99" of `xs`, in whole ms. */
const pp = (xs: number[]) => `${f0(percentile(xs, 50))} / ${f0(percentile(xs, 99))}`;
const setups = (rs: Row[], key: keyof Setup) =>
  rs.flatMap((r) => r.setup.map((s) => s[key])).filter((x): x is number => x !== undefined);
console.log(
  `phone calls bench: ${LINES.length} turns a call, phone levels ${PHONE_SPEC}, web levels ${WEB_LEVELS}, ` +
    `phones dial ${
      VIA_REDIRECT ? "the number at the redirect server" : "the worker with a token"
    }; ` +
    `${navigator.hardwareConcurrency} cores, load ${loadAverage()}`,
);
const rows: Row[] = [];
try {
  // Unmeasured: the worker's first web and phone call (JIT, engines' pools, the recogniser's
  // learnt prior), as call_density.ts's warm-up; then each N's web level beside its phone level.
  await webCalls(1);
  await phoneCall(0);
  const plan: (readonly ["web" | "phone", number])[] = [
    ...new Set([...WEB_LEVELS, ...PHONE_LEVELS]),
  ].sort((a, b) => a - b).flatMap((n) => [
    ...(WEB_LEVELS.includes(n) ? [["web", n] as const] : []),
    ...(PHONE_LEVELS.includes(n) ? [["phone", n] as const] : []),
  ]);
  const holds = (r: Row) => r.skipped === 0 && r.unanswered === 0 && r.errors.length === 0;
  const benchStart = performance.now();
  for (let i = 0; i < plan.length; i++) {
    const [kind, n] = plan[i];
    const row = await level(kind, n);
    rows.push(row);
    // The next level, if this was the last listed one and it held, and it likely fits the budget.
    const spent = (performance.now() - benchStart) / 1000;
    if (
      STEP_UP && i === plan.length - 1 && kind === "phone" && holds(row) && n + STEP <= MAX_CALLS &&
      spent + 45 < BUDGET_S
    ) plan.push(["phone", n + STEP]);
    console.log(
      `${kind} N=${n}: setup p50/p99 ${pp(setups([row], "total"))} ms, ` +
        `end of speech → first audio p50/p99 ${f0(percentile(row.latency, 50))}/${
          f0(percentile(row.latency, 99))
        } ms (n=${row.latency.length}, unanswered ${row.unanswered}), ` +
        `CPU ${f1(row.cpuMsPerCallS)} ms per call-second, RSS +${
          f1(row.rssMiBPerCall)
        } MiB a call ` +
        `(idle ${f0(row.idleRssMiB)} MiB)` +
        (row.skipped !== undefined ? `, skipped frames ${row.skipped}/${row.ticks}` : "") +
        `, load ${row.load}` + (row.errors.length ? `\n  errors: ${row.errors.join("; ")}` : ""),
    );
  }
} finally {
  await redirect?.close();
  await worker.stop();
  await api.close();
  await served.shutdown();
}

const phones = rows.filter((r) => r.kind === "phone");
const phoneLatency = phones.flatMap((r) => r.latency);
const clean = (r: Row) => r.skipped === 0 && r.unanswered === 0 && r.errors.length === 0;
const held = phones.filter(clean).map((r) => r.n);
const fast = phones.filter((r) => clean(r) && percentile(r.latency, 99) <= MAX_P99_MS).map((r) =>
  r.n
);
const failedAt = phones.filter((r) => !clean(r)).map((r) => r.n);
console.log(
  "\n| calls | kind | INVITE → 302 (redirect) | INVITE → 200 (worker) | first INVITE → 200 | end of speech → first audio | worker CPU ms per call-second | RSS MiB per call | skipped frames |",
);
console.log("| --: | --- | --: | --: | --: | --: | --: | --: | --: |");
for (const r of rows) {
  const phone = r.kind === "phone";
  console.log(
    `| ${r.n} | ${r.kind} | ${phone ? pp(setups([r], "redirect")) : "–"} | ${
      phone ? pp(setups([r], "worker")) : "–"
    } | ${phone ? pp(setups([r], "total")) : "–"} | ${pp(r.latency)} (n=${r.latency.length}) | ${
      f1(r.cpuMsPerCallS)
    } | ${f1(r.rssMiBPerCall)} | ${phone ? `${r.skipped} / ${r.ticks}` : "–"} |`,
  );
}
console.log("(p50 / p99 in ms; n for setup = the level's calls)");
console.log(
  `\nall phone calls: INVITE → 302 ${
    pp(setups(phones, "redirect"))
  } ms, INVITE → 200 at the worker ${pp(setups(phones, "worker"))} ms, first INVITE → 200 ${
    pp(setups(phones, "total"))
  } ms (n=${setups(phones, "total").length}); end of speech → first audio ${
    pp(phoneLatency)
  } ms (n=${phoneLatency.length})`,
);
const cores = navigator.hardwareConcurrency;
const perCore = (ns: number[]) => {
  const most = ns.length ? Math.max(...ns) : 0;
  return `${most} calls (${(most / cores).toFixed(1)} per core on ${cores} shared cores)`;
};
console.log(
  `largest phone level with every line answered and no skipped frame: ${perCore(held)}` +
    (failedAt.length ? `; frames skipped or lines unanswered at ${failedAt.join(", ")}` : "") +
    `\n  ... and end of speech → first audio p99 ≤ ${MAX_P99_MS} ms: ${perCore(fast)}`,
);
const json = Deno.env.get("BENCH_PHONE_JSON");
if (json) Deno.writeTextFileSync(json, JSON.stringify(rows, null, 2));
