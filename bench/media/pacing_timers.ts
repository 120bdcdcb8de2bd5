// What pacing itself costs the media thread: N pacers with a trivial tick for a few seconds, each
// on a timer of its own against all on one shared FrameClock (media/audio/frame_clock.ts), rounds
// interleaved. Printed: the process's CPU per tick (µs) and share of a core; the work in the tick is
// the same in both, so the difference is the timers'.
// Run: deno run -A bench/media/pacing_timers.ts [pacers=50] [seconds=8] [rounds=3]
import { FrameClock } from "../../media/audio/frame_clock.ts";
import { Pacer } from "../../media/audio/pacer.ts";
import { hostSpeedProbe } from "./host_speed.ts";
import { cpuSeconds } from "../harness/proc.ts";
import { setTimeout as sleep } from "node:timers/promises";

const N = Number(Deno.args[0] ?? 50);
const SECONDS = Number(Deno.args[1] ?? 8);
const ROUNDS = Number(Deno.args[2] ?? 3);

/** This process's CPU so far, ms (utime + stime, in clock ticks). */
const cpuMs = () => cpuSeconds(Deno.pid) * 1000;

async function run(shared: boolean) {
  const clock = shared ? new FrameClock() : undefined;
  let work = 0;
  const tick = () => {
    for (let i = 0; i < 200; i++) work += i;
  };
  const pacers = Array.from({ length: N }, () => new Pacer(tick, clock ? { clock } : {}));
  const c0 = cpuMs(), t0 = performance.now();
  pacers.forEach((p) => p.start());
  await sleep(SECONDS * 1000);
  pacers.forEach((p) => p.stop());
  const ms = cpuMs() - c0, wall = performance.now() - t0;
  const ticks = pacers.reduce((a, p) => a + p.ticks, 0);
  return { ms, wall, ticks, work };
}

console.log(
  `pacing_timers: ${N} pacers, ${SECONDS} s a run; host probe ${hostSpeedProbe().toFixed(3)} ms`,
);
for (let r = 0; r < ROUNDS; r++) {
  for (const shared of [false, true]) {
    const x = await run(shared);
    console.log(
      `  ${shared ? "one shared clock " : "a timer each     "}: ${
        ((x.ms * 1000) / x.ticks).toFixed(1)
      } µs ` +
        `per tick, ${((x.ms / x.wall) * 100).toFixed(1)} % of a core (${x.ticks} ticks)`,
    );
  }
}
