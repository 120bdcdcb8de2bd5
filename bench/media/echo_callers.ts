// All the test callers of one echo_calls.ts level, in one process of their own, so their CPU is
// not counted as the worker's. Spawned by bench/media/echo_calls.ts; not meant to be run by hand.
//
// stdin, one line each: a JSON config ({ calls: [{ endpoint, headers }], wav, seconds }), then
// "mark" (the steady-state window starts) and "stop" (it ends: report, hang up, exit).
// stdout: lines `@@echo <json>` — {type:"ready"}, {type:"marked"}, {type:"result"}; anything
// else on stdout (library chatter) is ignored by the driver.
import { childSide } from "../harness/line_child.ts";
import { percentile } from "../harness/stats.ts";
import { Pacer } from "../../media/audio/pacer.ts";
import { OpusRtpSender } from "../../media/rtc/rtp_sender.ts";
import { TestCaller } from "../../caller/caller.ts";
import { readWav, rms, to48k } from "../../caller/wav.ts";
import { FRAME_SAMPLES_48K, OpusEncoder } from "../../wasm/opus.ts";

export interface CallersConfig {
  calls: { endpoint: string; headers: Record<string, string> }[];
  /** 48 kHz speech WAV, looped for `seconds`. */
  wav: string;
  seconds: number;
}

/** One caller's figures over the window between "mark" and "stop". */
export interface CallerWindow {
  /** Bot packets received in the window, and how many 20 ms frames the window holds. */
  packets: number;
  expected: number;
  /** Inter-arrival gap minus 20 ms, over consecutive packets in the window. */
  gapP50Ms: number;
  gapP99Ms: number;
  gapMaxMs: number;
  /** Frames this caller sent in the window. */
  sent: number;
  /** RMS of the decoded bot audio in the window (the echo of the caller's speech). */
  echoRms: number;
}

export interface CallersResult {
  type: "result";
  windowMs: number;
  spokenRms: number;
  calls: CallerWindow[];
  /** Lateness of a no-op 20 ms pacer in this process: how busy the callers' own loop was. */
  loopLateP99Ms: number;
  loopSkipped: number;
}

/**
 * The whole stream as Opus packets, encoded once (libopus defaults, as TestCaller.stream encodes):
 * every caller sends these same packets. A browser encodes on its own machine; 50 encoders in
 * this process would take most of the core the worker needs on a 2-core box.
 */
function encodeStream(pcm: Int16Array): Uint8Array[] {
  const encoder = new OpusEncoder();
  const frame = new Int16Array(FRAME_SAMPLES_48K);
  const packets: Uint8Array[] = [];
  for (let at = 0; at < pcm.length; at += FRAME_SAMPLES_48K) {
    frame.fill(0);
    frame.set(pcm.subarray(at, Math.min(at + FRAME_SAMPLES_48K, pcm.length)));
    packets.push(encoder.encode(frame).slice());
  }
  encoder.close();
  return packets;
}

/** Sends `packets` from `caller`'s audio sender in real time, as TestCaller.stream would. */
function streamPackets(caller: TestCaller, packets: Uint8Array[]): Pacer {
  const tx = new OpusRtpSender(caller.audio.sender);
  let next = 0;
  const pacer = new Pacer((t) => {
    if (t.frame >= packets.length) return pacer.stop();
    // Frames the pacer skipped after a stall are dropped, as a live microphone's would be.
    if (t.frame > next) tx.skip(t.frame - next);
    next = t.frame + 1;
    tx.sendConstant(packets[t.frame]);
    caller.sentAt.push(performance.now());
  }, { histogram: false });
  pacer.start();
  return pacer;
}

/** 0 for no samples: the result travels as JSON, where NaN would arrive as null. */
const pct = (xs: number[], p: number) => (xs.length ? percentile(xs, p) : 0);

async function main() {
  const { config, input, say } = await childSide<CallersConfig>("@@echo");

  // The speech repeated to cover the whole call: one gapless stream per caller.
  const speech = to48k(await readWav(config.wav));
  const spokenRms = rms(speech);
  const pcm = new Int16Array(Math.ceil(config.seconds * 48000));
  for (let o = 0; o < pcm.length; o += speech.length) {
    pcm.set(speech.subarray(0, Math.min(speech.length, pcm.length - o)), o);
  }
  const packets = encodeStream(pcm);

  const t0 = performance.now();
  const callers: TestCaller[] = [];
  const failures: string[] = [];
  // Ten setups at a time: all 50 at once would time out DTLS on a 2-core machine, and setup
  // speed is bench/connect's subject, not this one's.
  for (let i = 0; i < config.calls.length; i += 10) {
    await Promise.all(
      config.calls.slice(i, i + 10).map(async ({ endpoint, headers }) => {
        try {
          const caller = await TestCaller.connect({ offerUrl: endpoint, headers });
          try {
            await caller.ready(20_000);
            callers.push(caller);
          } catch (e) {
            await caller.hangUp();
            throw e;
          }
        } catch (e) {
          failures.push((e as Error).message);
        }
      }),
    );
  }
  const setupMs = performance.now() - t0;

  // Streams start spread over one 20 ms frame, as independent calls would, not all in phase.
  const n = callers.length;
  const streams: Pacer[] = [];
  callers.forEach((c, i) =>
    setTimeout(() => streams.push(streamPackets(c, packets)), (i * 20) / n)
  );
  const loop = new Pacer(() => {});
  say({ type: "ready", connected: n, failures, setupMs });

  const marks: { arrivals: number; sent: number; samples: number }[] = [];
  let markedAt = 0;
  for await (const line of input) {
    if (line === "mark") {
      markedAt = performance.now();
      for (const c of callers) {
        marks.push({
          arrivals: c.arrivals.length,
          sent: c.sentAt.length,
          samples: c.receivedPcm().length,
        });
      }
      loop.start();
      say({ type: "marked" });
    } else if (line === "stop") {
      break;
    }
  }
  const windowMs = performance.now() - markedAt;
  loop.stop();
  for (const p of streams) p.stop();
  const calls = callers.map((c, i): CallerWindow => {
    const m = marks[i] ?? { arrivals: 0, sent: 0, samples: 0 };
    const arrivals = c.arrivals.slice(m.arrivals);
    const gaps = arrivals.slice(1).map((a, j) => a.at - arrivals[j].at - 20);
    const received = c.receivedPcm();
    return {
      packets: arrivals.length,
      expected: Math.round(windowMs / 20),
      gapP50Ms: pct(gaps, 50),
      gapP99Ms: pct(gaps, 99),
      gapMaxMs: gaps.length ? Math.max(...gaps) : 0,
      sent: c.sentAt.length - m.sent,
      echoRms: rms(received, m.samples),
    };
  });
  const loopStats = loop.stats();
  const result: CallersResult = {
    type: "result",
    windowMs,
    spokenRms,
    calls,
    loopLateP99Ms: loopStats.p99LateMs,
    loopSkipped: loopStats.skipped,
  };
  say(result);
  await Promise.all(callers.map((c) => c.hangUp().catch(() => {})));
  Deno.exit(0);
}

if (import.meta.main) await main();
