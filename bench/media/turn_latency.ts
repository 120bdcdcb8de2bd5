// End of the caller's speech to the bot's first audio, as the caller hears it, with today's
// VAD-only end of turn (END_OF_TURN=fixed: the VAD's fixed silence window, barge-in cancels at
// once) against the adaptive one (END_OF_TURN=adaptive) in the same run: a fresh worker process
// each (local engines), the example brain behind a proxy that counts the Cancel frames it gets,
// and a werift caller speaking festival audio. Measured from the audio the caller sent (its last
// voiced sample) and received (the first frame louder than RMS 300), never from messages.
//   1. ten English turns: p50/p99, the first turn against the later ones;
//   2. a backchannel script: "yeah", "okay", "right", "sure" over a long reply (false
//      cancellations: Cancel frames the brain got; "mm hmm" is left out because pocketsphinx hears
//      festival's as "l m u", a limit of the local recogniser, see docs/decisions.md), then one real interruption (it must cancel), and how soon
//      the bot's audio stops at the caller after the speech onset: from the onset in the audio
//      (the VAD's detection included) and from the onset the worker detected (its
//      speech_started log entry; both processes read this machine's wall clock).
//   deno run -A bench/media/turn_latency.ts [modes=fixed,adaptive]   ("adaptive+noseed": recognition
//   starts from the model's prior, as before the seed prior; a mode "adaptive+warm" runs
//   one short call on the same worker first, as a worker in service has served calls before;
//   "adaptive+speculative" connects with config {"turns":{"speculative":true}}: a pause's words go
//   to the brain at once and the reply is held until the window closes, media/turn/speculative.ts).
//   A flag "brainN" holds every frame from the brain N ms (an LLM's first token; e.g.
//   "adaptive+brain300,adaptive+speculative+brain300").
//   The ten lines are said TURN_ROUNDS times (default 2), so that p99 rests on 20 turns.
import {
  botSilentAt,
  speech,
  speechOnsetMs,
  startCallService,
} from "../../tests/helpers/call_harness.ts";
import type { TestCaller } from "../../caller/caller.ts";
import { summarise } from "../../caller/turn_latency.ts";
import { percentile } from "../harness/stats.ts";
import { createExampleBrain } from "../../sdk/brain/example/brain.ts";
import { decodeServiceFrame } from "../../proto/frames.ts";
import { CLIENT_LATENCY_T } from "../../media/rtvi/protocol.ts";
import { LINES as SCRIPT_LINES } from "../harness/script.ts";
import { setTimeout as sleep } from "node:timers/promises";

const MODES = (Deno.args[0] ?? "fixed,adaptive").split(",");
const LINES = [
  ...SCRIPT_LINES,
  "can you hear me now",
  "what time is it",
  "where is the nearest station",
  "my name is john smith",
  "i need help with my account",
  "how much does it cost",
  "thank you very much",
];
const ROUNDS = Number(Deno.env.get("TURN_ROUNDS") ?? 2);
const TURNS = Array.from({ length: ROUNDS }, () => LINES).flat();
const BACKCHANNELS = ["yeah", "okay", "right", "sure"];
const STORY = "please tell me a long story";
const INTERRUPT = "wait stop what time is it";
const REPLY_TIMEOUT_MS = 15_000;

/**
 * The example brain behind a WebSocket proxy that counts the Cancel frames the worker sends; a
 * Cancel of a speculative turn not yet confirmed (the caller went on) is counted apart, as a
 * dropped speculation.
 */
function countingBrain(delayMs = 0) {
  const counts = { cancels: 0, turns: 0, speculative: 0, dropped: 0 };
  const speculativeIds = new Set<string>();
  const brain = createExampleBrain().serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const servers: Deno.HttpServer[] = [];
  const servable = {
    serve() {
      const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
        const { socket, response } = Deno.upgradeWebSocket(req);
        const upstream = new WebSocket(brain.url + new URL(req.url).search);
        upstream.binaryType = "arraybuffer";
        socket.binaryType = "arraybuffer";
        const queued: (string | ArrayBuffer)[] = [];
        upstream.onopen = () => queued.splice(0).forEach((m) => upstream.send(m));
        socket.onmessage = (ev) => {
          try {
            const { kind, body } = decodeServiceFrame(new Uint8Array(ev.data));
            const turnId = `${req.url} ${body.turn_id}`;
            if (kind === "cancel" && speculativeIds.has(turnId)) counts.dropped++;
            else if (kind === "cancel") counts.cancels++;
            if (kind === "user_turn") counts.turns++;
            if (kind === "user_turn" && body.speculative) {
              counts.speculative++;
              speculativeIds.add(turnId);
            }
            // Confirmed, it is a turn like any: a later Cancel is a barge-in's.
            if (kind === "turn_confirmed") speculativeIds.delete(turnId);
          } catch { /* not a frame: passed on as is */ }
          if (upstream.readyState === WebSocket.OPEN) upstream.send(ev.data);
          else queued.push(ev.data);
        };
        // A brain as slow as an LLM's first token: each frame from it held `delayMs` (in order).
        const pass = (data: unknown) =>
          socket.readyState === WebSocket.OPEN && socket.send(data as ArrayBuffer);
        upstream.onmessage = (ev) =>
          delayMs ? setTimeout(() => pass(ev.data), delayMs) : pass(ev.data);
        socket.onclose = () => upstream.close();
        upstream.onclose = () => socket.readyState === WebSocket.OPEN && socket.close();
        return response;
      });
      servers.push(server);
      return {
        url: `ws://127.0.0.1:${server.addr.port}/brain`,
        hostname: "127.0.0.1",
        port: server.addr.port,
        finished: server.finished,
        async shutdown() {
          await Promise.all(servers.map((s) => s.shutdown()));
          await brain.shutdown();
        },
      };
    },
  };
  return { counts, servable };
}

/** The first received frame louder than RMS 300 at `since` or later, polled until `ms` pass. */
const audioAfter = (caller: TestCaller, since: number, ms = REPLY_TIMEOUT_MS) =>
  caller.audioAfter(since, ms);

/** Waits until the bot has been quiet (no frame over RMS 300) for `quietMs`. */
async function quiet(caller: TestCaller, quietMs = 500, ms = 30_000) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const since = performance.now() - quietMs;
    if (caller.frames.firstAudio(since) === null) return;
    await sleep(50);
  }
}

/** The bot was audible in the `ms` before `at`. */
const audibleBefore = (caller: TestCaller, at: number, ms = 200) =>
  caller.frames.firstAudio(at - ms, at) !== null;

interface ModeResult {
  mode: string;
  turns: (number | null)[];
  falseCancels: number;
  backchannelsOverBot: number;
  resumed: number;
  /** Each backchannel: said over the bot or not, and whether a Cancel followed it. */
  words: string[];
  pauseMs: number[];
  interruptCancelled: boolean;
  stopMs: number | null;
  /** The same from the worker's detected onset, and how long the detection took. */
  pauseAfterDetectedMs: number[];
  stopAfterDetectedMs: number | null;
  detectMs: number[];
  /** The worker's end_to_first_audio and the recorded heard_at_caller of the ten turns. */
  workerMs: number[];
  recordedMs: number[];
  /** Speculative turns sent and dropped (cancelled: the caller went on), the whole call. */
  speculative: number;
  dropped: number;
  /** Confirmed speculative turns whose reply's audio was ready before the window closed. */
  readyBeforeEnd: number;
  confirmed: number;
  /** Their end of turn to first audio sent (release). */
  releaseMs: number[];
  seconds: number;
}

async function runMode(mode: string, pcm: Map<string, Int16Array>): Promise<ModeResult> {
  const t0 = performance.now();
  const slow = /^brain(\d+)$/.exec(mode.split("+").find((f) => /^brain\d+$/.test(f)) ?? "");
  const { counts, servable } = countingBrain(slow ? Number(slow[1]) : 0);
  // "adaptive+warm": the same worker has served one short call before (its recognition thread
  // has learnt a first-utterance prior), as a worker in service has; plain modes start fresh.
  // "adaptive+noseed": a fresh worker whose recognition threads start from the model's prior, as
  // before the seed prior (media/stt/seed_prior.ts): its first utterance takes the second pass.
  const [endOfTurn, ...flags] = mode.split("+");
  const warm = flags.includes("warm");
  const workerEnv: Record<string, string> = { END_OF_TURN: endOfTurn };
  if (flags.includes("noseed")) {
    workerEnv.SPEECH_ENGINES = JSON.stringify({ options: { pocketsphinx: { seedPrior: false } } });
  }
  const service = await startCallService(servable, { workerEnv });
  const connect = flags.includes("speculative") ? { config: { turns: { speculative: true } } } : {};
  const out: ModeResult = {
    mode,
    turns: [],
    falseCancels: 0,
    backchannelsOverBot: 0,
    resumed: 0,
    words: [],
    pauseMs: [],
    interruptCancelled: false,
    stopMs: null,
    pauseAfterDetectedMs: [],
    stopAfterDetectedMs: null,
    detectMs: [],
    workerMs: [],
    recordedMs: [],
    speculative: 0,
    dropped: 0,
    readyBeforeEnd: 0,
    confirmed: 0,
    releaseMs: [],
    seconds: 0,
  };
  try {
    if (warm) {
      const before = await service.call(connect);
      await audioAfter(before.caller, 0);
      await quiet(before.caller, 700);
      const { startedAt } = await before.caller.say(pcm.get(LINES[0])!);
      await audioAfter(before.caller, before.caller.frames.speechEnd(startedAt) ?? startedAt);
      await quiet(before.caller, 600);
      await before.caller.hangUp();
      await service.record(before.sessionId, "ended");
    }
    const { caller, sessionId } = await service.call(connect);
    await audioAfter(caller, 0);
    await quiet(caller, 700);

    // 1. The turns, each answered and heard out before the next.
    for (const line of TURNS) {
      const { startedAt } = await caller.say(pcm.get(line)!);
      const end = caller.frames.speechEnd(startedAt);
      const first = end === null ? null : await audioAfter(caller, end);
      const ms = end === null || first === null ? null : first - end;
      out.turns.push(ms);
      // As the page does: the worker keeps it on the turn as latency_ms.heard_at_caller.
      if (ms !== null) {
        caller.sendRtvi("client-message", {
          t: CLIENT_LATENCY_T,
          d: { end_of_speech_to_audio_ms: Math.round(ms * 10) / 10 },
        });
      }
      await quiet(caller, 600);
    }

    // 2. Backchannels over a long reply, then a real interruption.
    const asked = await caller.say(pcm.get(STORY)!);
    const storyAt = await audioAfter(caller, caller.frames.speechEnd(asked.startedAt)!);
    if (storyAt !== null) await sleep(Math.max(0, storyAt + 2000 - performance.now()));
    const cancelsBefore = counts.cancels;
    // Onsets said over the bot and when its audio stopped at the caller (performance.now()).
    const stops: { what: "pause" | "stop"; onset: number; stop: number }[] = [];
    for (const word of BACKCHANNELS) {
      const words = pcm.get(word)!;
      const before = counts.cancels;
      const { startedAt } = await caller.say(words);
      const onset = startedAt + speechOnsetMs(words);
      const over = audibleBefore(caller, onset);
      let heardAgain = false;
      if (over) {
        out.backchannelsOverBot++;
        // Only mid-word onsets: at the end of a sentence the bot's own gap would pass for a stop.
        const stop = audibleBefore(caller, onset, 60) ? botSilentAt(caller, onset) : undefined;
        if (stop !== undefined) {
          out.pauseMs.push(stop - onset);
          stops.push({ what: "pause", onset, stop });
        }
        const end = caller.frames.speechEnd(startedAt) ?? startedAt;
        heardAgain = await audioAfter(caller, end, 2000) !== null;
      }
      await sleep(1500);
      const cancelled = counts.cancels > before;
      // Resumed: heard again within 2 s of the word's end, and nothing was cancelled.
      if (heardAgain && !cancelled) out.resumed++;
      out.words.push(
        `"${word}" ${over ? "over the bot" : "in silence"}: ${cancelled ? "CANCEL" : "no cancel"}`,
      );
    }
    await sleep(500);
    out.falseCancels = counts.cancels - cancelsBefore;

    // The interruption, 2 s into a fresh story (the first may be over, or cut in fixed mode).
    await quiet(caller, 600);
    const again = await caller.say(pcm.get(STORY)!);
    const at = await audioAfter(caller, caller.frames.speechEnd(again.startedAt)!);
    if (at !== null) await sleep(Math.max(0, at + 2000 - performance.now()));
    const cancelsAtInterrupt = counts.cancels;
    const words = pcm.get(INTERRUPT)!;
    const { startedAt } = await caller.say(words);
    const onset = startedAt + speechOnsetMs(words);
    if (audibleBefore(caller, onset, 60)) {
      const stop = botSilentAt(caller, onset);
      out.stopMs = stop === undefined ? null : stop - onset;
      if (stop !== undefined) stops.push({ what: "stop", onset, stop });
    }
    if (Deno.env.get("BENCH_TRACE")) {
      // The bot's frames around the interruption's onset (ms from it : RMS), to check by eye.
      await sleep(1500);
      console.log(
        `${mode} interruption trace: ` +
          caller.frames.heard.filter((f) => f.at >= onset - 200 && f.at <= onset + 800).map((f) =>
            `${(f.at - onset).toFixed(0)}:${f.rms.toFixed(0)}`
          ).join(" "),
      );
    }
    await audioAfter(caller, caller.frames.speechEnd(startedAt) ?? startedAt);
    await quiet(caller, 600);
    out.interruptCancelled = counts.cancels > cancelsAtInterrupt;
    await caller.hangUp();
    // The worker's detected onset: its speech_started log entry (wall clock, same machine), the
    // first at or after the onset in the audio. The stop is then measured from it.
    const log = await service.log(sessionId);
    const started = log.filter((e) => e.kind === "speech_started").map((e) => Date.parse(e.at));
    for (const s of stops) {
      const onsetWall = performance.timeOrigin + s.onset;
      const detected = started.find((t) => t >= onsetWall - 5);
      if (detected === undefined) continue;
      const afterDetected = performance.timeOrigin + s.stop - detected;
      out.detectMs.push(detected - onsetWall);
      if (s.what === "pause") out.pauseAfterDetectedMs.push(afterDetected);
      else out.stopAfterDetectedMs = afterDetected;
    }
    // The worker's own figure for the same turns, and the caller's as the worker recorded it.
    const record = await service.record(sessionId, "ended");
    const speechTurns = (record.timings?.turns ?? []).filter((t: { trigger: string }) =>
      t.trigger === "speech"
    ).slice(0, TURNS.length);
    for (const t of speechTurns) {
      if (t.speculative) {
        out.confirmed++;
        if (t.marks.audio_ready < t.marks.end_of_turn) out.readyBeforeEnd++;
        if (t.latency_ms?.release !== undefined) out.releaseMs.push(t.latency_ms.release);
      }
      if (t.latency_ms?.end_to_first_audio !== undefined) {
        out.workerMs.push(t.latency_ms.end_to_first_audio);
      }
      if (t.latency_ms?.heard_at_caller !== undefined) {
        out.recordedMs.push(t.latency_ms.heard_at_caller);
      }
    }
  } finally {
    await service.close();
  }
  out.speculative = counts.speculative;
  out.dropped = counts.dropped;
  out.seconds = (performance.now() - t0) / 1000;
  return out;
}

const pcm = new Map<string, Int16Array>();
for (const text of [...LINES, ...BACKCHANNELS, STORY, INTERRUPT]) pcm.set(text, await speech(text));

const results: ModeResult[] = [];
for (const mode of MODES) results.push(await runMode(mode, pcm));

const f = (v: number | null | undefined) =>
  v === null || v === undefined || Number.isNaN(v) ? "-" : `${Math.round(v)} ms`;
console.log(
  `end of speech → first bot audio at the caller, ${TURNS.length} turns, then ${BACKCHANNELS.length} ` +
    `backchannels over a long reply and one interruption (2 cores shared by API, worker, brain, caller)`,
);
for (const r of results) {
  const s = summarise(r.turns);
  const later = r.turns.slice(1).filter((x): x is number => x !== null);
  console.log(`  END_OF_TURN=${r.mode} (${r.seconds.toFixed(0)} s)`);
  console.log(
    `    turns: p50 ${f(s.p50)}, p99 ${f(s.p99)} (n=${s.n}${
      s.missing ? `, ${s.missing} unheard` : ""
    }); ` +
      `first turn ${f(s.first)} vs later p50 ${f(s.later_p50)} (first − later ${
        f(s.first !== null && s.later_p50 !== null ? s.first - s.later_p50 : null)
      }); later max ${f(later.length ? Math.max(...later) : null)}`,
  );
  console.log(`    per turn: ${r.turns.map((x) => f(x)).join(", ")}`);
  console.log(
    `    the worker's own end_to_first_audio p50 ${f(percentile(r.workerMs, 50))} ` +
      `(from the caller's end of speech in the audio to the first audio sent: the network and playout are the rest); ` +
      `recorded heard_at_caller ` +
      `${r.recordedMs.length}/${r.turns.length} turns${
        r.recordedMs.length ? `, p50 ${f(percentile(r.recordedMs, 50))}` : ""
      }`,
  );
  console.log(
    `    backchannels: ${r.falseCancels} false cancellation(s) of ${r.backchannelsOverBot} said over the bot; ` +
      `resumed ${r.resumed}; bot paused after onset p50 ${f(percentile(r.pauseMs, 50))}, max ${
        f(r.pauseMs.length ? Math.max(...r.pauseMs) : null)
      }; after the worker detected the onset p50 ${
        f(percentile(r.pauseAfterDetectedMs, 50))
      }, max ${f(r.pauseAfterDetectedMs.length ? Math.max(...r.pauseAfterDetectedMs) : null)}`,
  );
  console.log(`      ${r.words.join("; ")}`);
  if (r.speculative) {
    console.log(
      `    speculative turns: ${r.dropped} dropped of ${r.speculative} sent (the whole call); ` +
        `of the ${r.confirmed} confirmed turns measured, ${r.readyBeforeEnd} had their reply's ` +
        `audio ready before the window closed; release (end of turn → first audio sent) p50 ${
          f(percentile(r.releaseMs, 50))
        }, max ${f(r.releaseMs.length ? Math.max(...r.releaseMs) : null)}`,
    );
  }
  console.log(
    `    interruption: ${r.interruptCancelled ? "cancelled" : "NOT cancelled"}; bot silent ${
      f(r.stopMs)
    } after the speech onset, ${f(r.stopAfterDetectedMs)} after the worker detected it ` +
      `(detection p50 ${f(percentile(r.detectMs, 50))} after the onset in the audio)`,
  );
}
if (results.length === 2) {
  const [a, b] = results.map((r) => summarise(r.turns));
  if (a.p50 !== null && b.p50 !== null) {
    console.log(
      `  ${results[1].mode} / ${results[0].mode}: p50 ${(b.p50 / a.p50).toFixed(2)}×, p99 ${
        (b.p99! / a.p99!).toFixed(2)
      }×`,
    );
  }
}
