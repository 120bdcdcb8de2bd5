// `deno task bench line_echo`: phone calls on lines that echo the bot back (issue 35), with the agent's
// echo cancellation off (the baseline) and on, in the same run against one worker process.
//
// Each call is SIPp dialling the worker (local engines: espeak-ng speaks, Silero and pocketsphinx
// listen) with tests/helpers/echoing_phone.ts as the phone: it sends back the bot's audio it
// received, `delay` ms later at `level` dB. Without double-talk the phone says nothing; with it,
// three seconds into the greeting the caller says SAID over the bot. Per call:
//   - self-interruptions: the bot paused or cut (bot_paused, barge_in) before the caller spoke
//   - WER of the caller's words said over the bot (the brain's turns after they spoke)
//   - worker CPU (its process tree, /proc) over the call, less its idle rate
// And the canceller alone, in process: CPU per call-second of audio.
import { startCallService } from "../tests/helpers/call_harness.ts";
import { freeUdpPort } from "../tests/helpers/sipp.ts";
import { callerVoice8k, echoCall, EchoingPhone } from "../tests/helpers/echoing_phone.ts";
import { speechWav } from "../tests/helpers/audio.ts";
import { readWav } from "../caller/wav.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { wordErrorRate } from "../media/stt/wer.ts";
import { EchoCanceller } from "../media/caller_audio/echo_canceller.ts";
import { treeCpuSeconds } from "./harness/proc.ts";

const GREETING = "Hello, you have reached the hotel desk. We have rooms near the airport, " +
  "near the station and in the old town, and all of them have breakfast included. " +
  "Tell me which one you would like and for how many nights.";
const SAID = "i am looking for a cheap hotel near the airport";
const HOLD_MS = 12_000;
/** [delay ms, level dB]: the range, the loudest level at each delay and each level at 120 ms. */
const LINES: [number, number][] = [[30, -6], [120, -6], [300, -6], [120, -12], [120, -20]];

const turns = new Map<string, { text: string; at: number }[]>();
const brain = createBrain({
  onSessionStart: () => GREETING,
  onTurn: (turn, session) => {
    const list = turns.get(session.id) ?? [];
    list.push({ text: turn.text, at: Date.now() });
    turns.set(session.id, list);
    return "Certainly.";
  },
});
const sipPort = await freeUdpPort();
const service = await startCallService(brain, {
  workerEnv: { SIP_PORT: String(sipPort), LOG_LEVEL: "warn" },
});
const pid = service.worker.child.process.pid;
const voice = await callerVoice8k(SAID);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idle0 = treeCpuSeconds(pid), t0 = performance.now();
await sleep(3000);
const idleRate = (treeCpuSeconds(pid) - idle0) / ((performance.now() - t0) / 1000);

interface Result {
  selfInterruptions: number;
  wer?: number;
  heard?: string;
  cpuMs: number;
}

async function call(delayMs: number, gainDb: number, doubleTalk: boolean, mode: "off" | "auto") {
  await service.api.admin("/api/v1/agents.update", {
    agent_id: service.tenant.agent_id,
    echo_cancellation: mode,
  });
  const phone = await EchoingPhone.open({ delayMs, gainDb });
  const cpu0 = treeCpuSeconds(pid), w0 = performance.now();
  let talkAt = Infinity;
  try {
    const { sessionId, done } = await echoCall(service, sipPort, phone, HOLD_MS);
    if (doubleTalk) {
      const until = performance.now() + 15_000;
      while (phone.received.length < 150 && performance.now() < until) await sleep(20);
      talkAt = Date.now();
      await phone.say(voice);
    }
    await done;
    const record = await service.record(sessionId, "ended", 20_000);
    const cpuMs = (treeCpuSeconds(pid) - cpu0 - idleRate * (performance.now() - w0) / 1000) * 1000;
    // deno-lint-ignore no-explicit-any
    const selfInterruptions = record.log.filter((e: any) =>
      e.source === "worker" && (e.kind === "bot_paused" || e.kind === "barge_in") &&
      Date.parse(e.at) < talkAt
    ).length;
    const result: Result = { selfInterruptions, cpuMs };
    if (doubleTalk) {
      const heard = (turns.get(sessionId) ?? []).filter((t) =>
        t.at >= talkAt
      ).map((t) => t.text)
        .join(" ");
      result.heard = heard;
      result.wer = wordErrorRate(SAID, heard);
    }
    return result;
  } finally {
    await phone.close();
  }
}

/** The canceller alone: ms of CPU per second of call audio (a bot frame and a caller frame each 20 ms). */
async function cancellerCpu(): Promise<number> {
  const bot = (await readWav(await speechWav(GREETING, 0.3, 48000))).samples;
  const canceller = new EchoCanceller(() => {});
  const frames = Math.floor(bot.length / 960);
  // The caller's frames (the bot's voice a quarter as loud, 120 ms late) made before timing.
  const callers = Array.from({ length: frames }, (_, i) => {
    const f = new Int16Array(320);
    for (let j = 0; j < 320; j++) f[j] = bot[Math.max(0, i - 6) * 960 + j * 3] >> 2;
    return f;
  });
  const start = performance.now();
  for (let i = 0; i < frames; i++) {
    canceller.sent(bot.subarray(i * 960, (i + 1) * 960));
    canceller.push(callers[i]);
  }
  const ms = performance.now() - start;
  canceller.close();
  return ms / (frames * 0.02);
}

const f2 = (n: number | undefined) => n === undefined ? "-" : n.toFixed(2);
const rows: string[] = [];
console.log(`idle worker CPU ${(idleRate * 1000).toFixed(1)} ms/s (taken off each call)`);
try {
  for (const doubleTalk of [false, true]) {
    for (const [delay, level] of LINES) {
      const off = await call(delay, level, doubleTalk, "off");
      const on = await call(delay, level, doubleTalk, "auto");
      console.log(JSON.stringify({ delay, level, doubleTalk, off, on }));
      rows.push(
        `| ${delay} | ${level} | ${
          doubleTalk ? "yes" : "no"
        } | ${off.selfInterruptions} | ${on.selfInterruptions} | ${f2(off.wer)} | ${f2(on.wer)} | ${
          off.cpuMs.toFixed(0)
        } | ${on.cpuMs.toFixed(0)} |`,
      );
    }
  }
  const alone = await cancellerCpu();
  console.log(
    `\n${HOLD_MS / 1000} s calls; the canceller alone: ${alone.toFixed(2)} ms CPU per call-second`,
  );
  console.log(
    "| delay ms | level dB | double-talk | self-interruptions off | on | WER off | on | CPU ms/call off | on |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of rows) console.log(r);
} finally {
  await service.close();
}
