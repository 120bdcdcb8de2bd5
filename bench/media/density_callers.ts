// The test callers of one call_density.ts level, in a process of their own so that their CPU is
// not the worker's. Spawned by bench/media/call_density.ts; not meant to be run by hand.
//
// stdin, one line each: a JSON config (DensityCallersConfig), then "hangup" once the driver has
// read the worker's figures. stdout: lines `@@density <json>` — {type:"scripted"} when every call
// has played its script (the calls are still up), then {type:"result"}; anything else on stdout
// (library chatter) is ignored by the driver.
//
// Every timing is taken here, from the audio: the end of a turn is when the frame holding the
// line's last voiced sample was handed to the network (sentAt), the bot's first audio is the
// first frame received after that whose RMS is above AUDIBLE, so the figures are what a caller
// hears, message timing aside.
import { BOT_LEVEL } from "../../caller/turn_latency.ts";
import { childSide } from "../harness/line_child.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { Pacer } from "../../media/audio/pacer.ts";
import { TestCaller } from "../../caller/caller.ts";
import { readWav, to48k } from "../../caller/wav.ts";
import { FRAME_SAMPLES_48K } from "../../wasm/opus.ts";

export interface DensityCall {
  endpoint: string;
  headers: Record<string, string>;
  /** 48 kHz (or lower) speech WAVs, said one after another, each waiting for the reply. */
  lines: string[];
  /** A WAV said over the reply to the last line, BARGE_AFTER_MS after that reply became audible. */
  barge?: string;
}

export interface DensityCallersConfig {
  /** Echo calls: no reply to wait for; each line is followed by echoPauseMs. */
  echo: boolean;
  calls: DensityCall[];
  /** Call i dials at i × staggerMs, so the calls are not in lock-step. */
  staggerMs: number;
  echoPauseMs: number;
  /** Pause after a reply before the next line. */
  gapMs: number;
}

export interface CallOutcome {
  error?: string;
  /** From the offer to the hang-up (every call is held until all calls played their script). */
  seconds: number;
  /** End of the caller's speech → first audible bot frame, per line; null: no reply in time. */
  latencyMs: (number | null)[];
  barge?: {
    /** Onset of the caller's speech over the bot → last audible bot frame before a 600 ms gap. */
    stopMs: number | null;
    /** Whether the bot was audible in the 200 ms before the caller's onset. */
    overBot: boolean;
    /** With BENCH_DENSITY_TRACE set: "ms-from-onset:rms" of the bot frames around the onset. */
    trace?: string;
  };
}

export interface DensityCallersResult {
  type: "result";
  calls: CallOutcome[];
  /** Lateness of a no-op 20 ms pacer in this process: how busy the callers' own loop was. */
  loopLateP99Ms: number;
  loopSkipped: number;
}

/** A received frame this loud (RMS of 16-bit samples) is the bot speaking: the caller's own level. */
export const AUDIBLE = BOT_LEVEL;
/** Below this a frame is silence when looking for the bot to stop (botSilentAt's). */
export const SILENT = 100;
/** The stop is the last audible frame before a gap this long (longer than espeak-ng's pauses). */
export const STOP_GAP_MS = 600;
export const BARGE_AFTER_MS = 1500;
const REPLY_TIMEOUT_MS = 15_000;

/**
 * A caller's line is speech where a 10 ms window's RMS, its mean removed, reaches this: festival's
 * WAVs carry offsets and a noise floor up to ~50 between words and around the line; 100 is ~37 dB
 * under their peaks and catches the onset of a fricative ("stop") within a window.
 */
export const SPOKEN = 100;

/** RMS of pcm[from, to) with its mean removed (festival's silences carry DC offsets). */
function acRms(pcm: Int16Array, from: number, to: number): number {
  let mean = 0;
  for (let i = from; i < to; i++) mean += pcm[i];
  mean /= to - from;
  let sum = 0;
  for (let i = from; i < to; i++) sum += (pcm[i] - mean) ** 2;
  return Math.sqrt(sum / (to - from));
}

/** Where a line's speech starts (first sample) and ends (the sample after the last), 10 ms grid. */
export function voicedSpan(pcm: Int16Array, level = SPOKEN): { onset: number; end: number } {
  const w = 480;
  let onset = -1, end = 0;
  for (let s = 0; s + w <= pcm.length; s += w) {
    if (acRms(pcm, s, s + w) >= level) {
      if (onset < 0) onset = s;
      end = s + w;
    }
  }
  return { onset: Math.max(0, onset), end };
}

/** When the mic frame holding `sample` of an utterance that started at `startedAt` went out. */
function sentTime(caller: TestCaller, startedAt: number, sample: number): number {
  const s = caller.sentAt;
  let first = s.length - 1;
  while (first > 0 && s[first - 1] >= startedAt) first--;
  const i = first + Math.floor(Math.max(0, sample - 1) / FRAME_SAMPLES_48K);
  return s[Math.min(i, s.length - 1)];
}

/** The bot's last audible frame after `since` that is followed by STOP_GAP_MS without one. */
function lastAudibleBeforeGap(caller: TestCaller, since: number): number | null {
  let last: number | null = null;
  for (const f of caller.heardFrames) {
    if (f.at < since || f.rms < SILENT) continue;
    if (last !== null && f.at - last >= STOP_GAP_MS) break;
    last = f.at;
  }
  return last;
}

function stopped(caller: TestCaller, fromIndex: number): Promise<unknown> {
  return caller.waitForMessage(
    (m) => caller.messages.indexOf(m) >= fromIndex && m.type === "bot-stopped-speaking",
    REPLY_TIMEOUT_MS * 2,
  ).catch(() => {});
}

async function script(
  caller: TestCaller,
  call: DensityCall,
  pcm: Map<string, Int16Array>,
  config: DensityCallersConfig,
  out: CallOutcome,
): Promise<void> {
  if (!config.echo) {
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 20_000).catch(() => {});
  }
  for (const [k, path] of call.lines.entries()) {
    const line = pcm.get(path)!;
    if (config.echo) {
      await caller.say(line);
      await sleep(config.echoPauseMs + config.gapMs);
      continue;
    }
    const i0 = caller.messages.length;
    const { startedAt } = await caller.say(line);
    const endAt = sentTime(caller, startedAt, voicedSpan(line).end);
    const first = await caller.audioAfter(endAt, REPLY_TIMEOUT_MS);
    out.latencyMs.push(first === null ? null : first - endAt);
    if (call.barge && k === call.lines.length - 1 && first !== null) {
      await sleep(Math.max(0, first + BARGE_AFTER_MS - performance.now()));
      const words = pcm.get(call.barge)!;
      const span = voicedSpan(words);
      const said = caller.say(words);
      const { startedAt: bargeAt } = await said;
      const onsetAt = sentTime(caller, bargeAt, span.onset + 1);
      const overBot = caller.heardFrames.some((f) =>
        f.at >= onsetAt - 200 && f.at <= onsetAt && f.rms > AUDIBLE
      );
      // The reply to the words said over the bot, then its end.
      const reply = await caller.audioAfter(
        sentTime(caller, bargeAt, span.end),
        REPLY_TIMEOUT_MS,
      );
      if (reply !== null) await stopped(caller, caller.messages.length);
      const last = lastAudibleBeforeGap(caller, onsetAt);
      out.barge = { stopMs: last === null ? null : last - onsetAt, overBot };
      if (Deno.env.get("BENCH_DENSITY_TRACE")) {
        // The bot's frames around the onset, to check the stop time by eye.
        out.barge.trace = caller.heardFrames.filter((f) =>
          f.at >= onsetAt - 300 && f.at <= onsetAt + 1500
        ).map((f) => `${(f.at - onsetAt).toFixed(0)}:${f.rms.toFixed(0)}`).join(" ");
      }
    } else if (first !== null) {
      await stopped(caller, i0);
    }
    await sleep(config.gapMs);
  }
}

async function main() {
  const { config, input, say } = await childSide<DensityCallersConfig>("@@density");
  const pcm = new Map<string, Int16Array>();
  for (const c of config.calls) {
    for (const p of [...c.lines, ...(c.barge ? [c.barge] : [])]) {
      if (!pcm.has(p)) pcm.set(p, to48k(await readWav(p)));
    }
  }

  const loop = new Pacer(() => {});
  loop.start();
  const callers: (TestCaller | undefined)[] = [];
  const startedAt: number[] = [];
  const outcomes: CallOutcome[] = config.calls.map(() => ({ seconds: 0, latencyMs: [] }));
  await Promise.all(config.calls.map(async (call, i) => {
    await sleep(i * config.staggerMs);
    startedAt[i] = performance.now();
    try {
      const caller = await TestCaller.connect({ offerUrl: call.endpoint, headers: call.headers });
      callers[i] = caller;
      await caller.ready(20_000);
      caller.openMicrophone();
      await script(caller, call, pcm, config, outcomes[i]);
    } catch (e) {
      outcomes[i].error = (e as Error).message;
    }
  }));
  loop.stop();
  say({ type: "scripted" });
  for await (const line of input) if (line === "hangup") break;
  await Promise.all(callers.map(async (c, i) => {
    await c?.hangUp().catch(() => {});
    outcomes[i].seconds = (performance.now() - startedAt[i]) / 1000;
  }));
  const stats = loop.stats();
  const result: DensityCallersResult = {
    type: "result",
    calls: outcomes,
    loopLateP99Ms: stats.p99LateMs,
    loopSkipped: stats.skipped,
  };
  say(result);
  Deno.exit(0);
}

if (import.meta.main) await main();
