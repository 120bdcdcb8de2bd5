// Calls over bad networks, one table against the clean row of the same run (issue 25). The whole
// service (API, a worker process with the local engines, a brain) and, per condition, calls from
// the caller simulator (caller/simulator.ts) with the impairment on its own sockets from its
// first packet (caller/lossy_link.ts: random or Gilbert bursty loss, jitter, reordering), and
// from Debian Chromium in a network namespace shaped by iptables (network_chromium.ts).
//
// A simulator call: greeting; TURNS festival sentences, each heard and answered; a barge-in
// (asks the example brain for its story, talks over it 1.5 s in); the page's typed "goodbye",
// which the brain answers and ends the call on. Completed = exit 0 of the simulator (greeting and
// every turn) and the call-ended notice at the caller. Per row:
// - last messages: the caller got the call-ended notice and peerLeft, and the worker's drain of
//   the chat channel was acknowledged (`last_messages.delivered`);
// - WER: the recognised text against the script (pooled over the row) and against what the clean
//   row heard of the same sentence (the network's own share of the errors);
// - end of speech → first bot audio at the caller, p50/p99 (the simulator's own figure);
// - barge-in: the onset of the caller's "stop please" → the caller's audio quiet (5 frames);
// - recording: |recording seconds − (ended_at − started_at)| / call length, mean and worst;
// - receiver: CallerReceiver's time over a minute of caller packets put through the same
//   impairment (receiver_cost.ts), as a share of the worker's CPU per call-second in the row.
// Run: deno run -A bench/media/network.ts      (`deno task bench network`; ~15 min)
// Environment: BENCH_NET_CALLS (3 per row), BENCH_NET_TURNS (3), BENCH_NET_ROWS (labels to run,
// comma-separated; default all), BENCH_NET_CHROMIUM (1; 0 skips the Chromium rows),
// BENCH_NET_CHROMIUM_CALLS (= BENCH_NET_CALLS), BENCH_NET_JSON (a file for every call's figures),
// BENCH_NET_LINGER_MS (0: how long the simulator stays on the line after the call's end). Chromium rows need root, `ip` and iptables.
import { setTimeout as sleep } from "node:timers/promises";
import {
  askForTheStory,
  botSilentAt,
  speech,
  speechOnsetMs,
  startCallService,
} from "../../tests/helpers/call_harness.ts";
import { createExampleBrain } from "../../sdk/brain/example/brain.ts";
import { simulateCall } from "../../caller/simulator.ts";
import type { TestCaller } from "../../caller/caller.ts";
import { festivalSpeech } from "../../caller/festival_voice.ts";
import { impairedLink, type Impairment } from "../../caller/lossy_link.ts";
import type { SpokenTurn } from "../../caller/script.ts";
import { HELD_SCRIPTS, SCRIPTS } from "../../tests/helpers/test_speech.ts";
import { readCallEnded } from "../../proto/rtvi.ts";
import { available } from "../../tests/helpers/netns.ts";
import { cpuSeconds } from "../harness/proc.ts";
import { arrivalsThrough, receiverMs, speechLikePackets } from "./receiver_cost.ts";
import { readRecord, type Shape, startChromiumBench } from "./network_chromium.ts";
import { type CallFigures, formatTable, type Row, summariseRow } from "./network_table.ts";

const CALLS = Number(Deno.env.get("BENCH_NET_CALLS") ?? 3);
const TURNS = Number(Deno.env.get("BENCH_NET_TURNS") ?? 3);
const ONLY = Deno.env.get("BENCH_NET_ROWS")?.split(",");
const CHROMIUM = Deno.env.get("BENCH_NET_CHROMIUM") !== "0";
const LINGER_MS = Number(Deno.env.get("BENCH_NET_LINGER_MS") ?? 0);
const CHROMIUM_CALLS = Number(Deno.env.get("BENCH_NET_CHROMIUM_CALLS") ?? CALLS);

const none = { loss: 0, burst: 1, jitterMs: 0 };
const SIMULATOR_ROWS: { label: string; impairment: Impairment }[] = [
  { label: "clean", impairment: none },
  { label: "2 % loss", impairment: { ...none, loss: 0.02 } },
  { label: "5 % loss", impairment: { ...none, loss: 0.05 } },
  { label: "10 % loss", impairment: { ...none, loss: 0.1 } },
  { label: "20 % loss", impairment: { ...none, loss: 0.2 } },
  { label: "5 % bursty (mean 4)", impairment: { ...none, loss: 0.05, burst: 4 } },
  { label: "30 ms jitter", impairment: { ...none, jitterMs: 30 } },
  { label: "60 ms jitter", impairment: { ...none, jitterMs: 60 } },
  { label: "2 % reordered", impairment: { ...none, reorder: 0.02 } },
  // The same calls as the first row again: how far two clean runs differ (the figures' noise).
  { label: "clean, again", impairment: none },
];
const CHROMIUM_ROWS: { label: string; shape: Shape; impairment: Impairment }[] = [
  { label: "clean", shape: { kind: "none" }, impairment: none },
  { label: "20 % loss", shape: { kind: "random", loss: 0.2 }, impairment: { ...none, loss: 0.2 } },
  {
    label: "5 % bursty (mean 4)",
    shape: { kind: "bursty", loss: 0.05, burst: 4, seed: 1 },
    impairment: { ...none, loss: 0.05, burst: 4 },
  },
  { label: "UDP blocked (ICE-TCP)", shape: { kind: "udp-blocked" }, impairment: none },
];
const wanted = (label: string) => !ONLY || ONLY.some((o) => label.includes(o));

const SENTENCES = [...SCRIPTS, ...HELD_SCRIPTS];
const sentenceOf = (call: number, turn: number) =>
  SENTENCES[(call * TURNS + turn) % SENTENCES.length];

/** The receiver's ms per call-second under `impairment` (a minute of packets, seeded). */
const packets = speechLikePackets(3000);
function receiverMsPerCallSecond(impairment: Impairment): number {
  return receiverMs(arrivalsThrough(packets, impairedLink({ ...impairment, seed: 11 }))) / 60;
}

// --- the simulator rows -------------------------------------------------------------------------

const turnsAudio = new Map<string, SpokenTurn>();
for (let c = 0; c < CALLS; c++) {
  for (let t = 0; t < TURNS; t++) {
    const text = sentenceOf(c, t);
    if (!turnsAudio.has(text)) {
      turnsAudio.set(text, { label: text, text, pcm: await festivalSpeech(text) });
    }
  }
}
const stopPlease = await speech("stop please");

interface After {
  bargeMs?: number;
  endNotice: boolean;
  peerLeft: boolean;
}

/** The barge-in and the typed goodbye, on the simulator's live call. */
async function afterTurns(caller: TestCaller, after: After): Promise<void> {
  try {
    await askForTheStory(caller, 20_000);
    await sleep(1500);
    const { startedAt } = await caller.say(stopPlease);
    const onset = startedAt + speechOnsetMs(stopPlease);
    await sleep(1500);
    const quiet = botSilentAt(caller, onset);
    if (quiet !== undefined) after.bargeMs = quiet - onset;
    await sleep(1500);
  } catch { /* the story was not asked for (misheard): no barge-in figure for this call */ }
  const from = caller.messages.length;
  caller.sendRtvi("send-text", { content: "goodbye", options: {} });
  const since = (m: unknown) => caller.messages.indexOf(m as never) >= from;
  const [notice, left] = await Promise.all([
    caller.waitForMessage(
      (m) => since(m) && m.type === "server-message" && readCallEnded(m.data) !== undefined,
      20_000,
    ).then(() => true, () => false),
    caller.waitForMessage(
      (m) =>
        since(m) && m.type === "signalling" &&
        (m.message as { type?: string })?.type === "peerLeft",
      20_000,
    ).then(() => true, () => false),
  ]);
  after.endNotice = notice;
  after.peerLeft = left;
  // The simulator hangs up as soon as it has the end; a caller that stays a moment lets its last
  // SACK out of the link's jitter hold (BENCH_NET_LINGER_MS; see README).
  if (LINGER_MS) await sleep(LINGER_MS);
}

const rows: Row[] = [];
const simulatorRows = SIMULATOR_ROWS.filter((r) => wanted(r.label));
if (simulatorRows.length) {
  const service = await startCallService(createExampleBrain(), { record_by_default: true });
  const pid = service.worker.child.process.pid;
  try {
    for (const row of simulatorRows) {
      const cpu0 = cpuSeconds(pid);
      const calls = await Promise.all(
        Array.from({ length: CALLS }, async (_, c): Promise<CallFigures> => {
          await sleep(c * 1000);
          const after: After = { endNotice: false, peerLeft: false };
          const turns = Array.from({ length: TURNS }, (_, t) => turnsAudio.get(sentenceOf(c, t))!);
          const r = await simulateCall({
            api: service.api.url,
            key: service.tenant.sk,
            agent: service.tenant.agent_id,
            turns,
            timeoutMs: 20_000,
            impairment: { ...row.impairment, seed: c + 1 },
            afterTurns: (caller) => afterTurns(caller, after),
          });
          const figures: CallFigures = {
            completed: r.exit_code === 0 && after.endNotice,
            failure: r.failure?.message ?? (after.endNotice ? undefined : "no call-ended notice"),
            lastDelivered: after.endNotice && after.peerLeft,
            // Each turn's own final transcripts (the report's `heard` of the last turn also
            // gathers what the barge-in said).
            turns: r.events.flatMap((e) =>
              e.type === "wer"
                ? [{
                  said: e.said,
                  heard: e.heard,
                  latencyMs: r.turns[e.step - 1]?.latency.bot_audio ?? undefined,
                }]
                : []
            ),
            bargeMs: after.bargeMs,
          };
          if (r.session_id) {
            try {
              readRecord(await service.record(r.session_id, "ended", 40_000), figures);
            } catch (e) {
              figures.failure ??= `no ended record: ${(e as Error).message.split("\n")[0]}`;
            }
          }
          figures.undelivered = [
            after.endNotice ? "" : "no call-ended notice",
            after.peerLeft ? "" : "no peerLeft",
            figures.workerDelivered
              ? ""
              : `worker's drain not acknowledged in ${figures.drainMs} ms`,
          ].filter(Boolean).join(", ") || undefined;
          return figures;
        }),
      );
      const cpuMs = (cpuSeconds(pid) - cpu0) * 1000;
      rows.push(
        summariseRow("simulator", row.label, calls, cpuMs, receiverMsPerCallSecond(row.impairment)),
      );
      console.error(`simulator ${row.label}: done`);
    }
  } finally {
    await service.close();
  }
}

// --- the Chromium rows --------------------------------------------------------------------------

const chromiumRows = CHROMIUM_ROWS.filter((r) => wanted(r.label));
if (CHROMIUM && chromiumRows.length) {
  if (!(await available())) {
    console.log("Chromium rows skipped: they need root, `ip` and iptables");
  } else {
    const bench = await startChromiumBench();
    try {
      for (const row of chromiumRows) {
        const cpu0 = cpuSeconds(bench.workerPid);
        const calls: CallFigures[] = [];
        for (let c = 0; c < CHROMIUM_CALLS; c++) {
          const shape = row.shape.kind === "bursty" ? { ...row.shape, seed: c + 1 } : row.shape;
          const r = await bench.call(shape, sentenceOf(c, 0));
          calls.push({
            ...r,
            lastDelivered: r.endSeen,
            undelivered: [
              r.endSeen ? "" : "the page did not see the end",
              r.workerDelivered ? "" : `worker's drain not acknowledged in ${r.drainMs} ms`,
            ].filter(Boolean).join(", ") || undefined,
            turns: r.heard === undefined
              ? []
              : [{ said: r.said, heard: r.heard, latencyMs: r.latencyMs }],
          });
        }
        const cpuMs = (cpuSeconds(bench.workerPid) - cpu0) * 1000;
        rows.push(
          summariseRow(
            "Chromium",
            row.label,
            calls,
            cpuMs,
            receiverMsPerCallSecond(row.impairment),
          ),
        );
        console.error(`Chromium ${row.label}: done`);
      }
    } finally {
      await bench.close();
    }
  }
}

console.log(
  `\n${CALLS} simulator calls per row (${TURNS} turns, a barge-in, a goodbye), ${CHROMIUM_CALLS} Chromium calls per row (1 turn)`,
);
console.log(formatTable(rows));
for (const row of rows) {
  for (const f of row.failures) console.log(`  ${row.caller} ${row.label}: ${f}`);
  for (const c of row.calls) {
    if (c.undelivered) console.log(`  ${row.caller} ${row.label}, last messages: ${c.undelivered}`);
  }
}
const json = Deno.env.get("BENCH_NET_JSON");
if (json) await Deno.writeTextFile(json, JSON.stringify(rows, null, 1));
Deno.exit(0);
