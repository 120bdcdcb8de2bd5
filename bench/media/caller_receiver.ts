// What the caller's receiver costs per call: a minute of caller packets (3,000, 10 % lost, some
// reordered and duplicated) through the jitter buffer alone (what call.ts runs today, in front of
// the conversation's own decoder), and through CallerReceiver (buffer + decode, with FEC
// recovery and concealment), against decoding the same packets as they arrive (the old path).
// Run: deno run -A bench/media/caller_receiver.ts
import { OpusDecoder } from "../../wasm/opus.ts";
import { JitterBuffer } from "../../media/rtc/jitter_buffer.ts";
import { type Arrival, receiverMs, speechLikePackets } from "./receiver_cost.ts";

const FRAMES = 3000;
const packets = speechLikePackets(FRAMES);
const arrivals: Arrival[] = [];
for (let i = 0; i < FRAMES; i++) {
  if (i % 10 === 5) continue;
  if (i % 17 === 3 && i + 1 < FRAMES && (i + 1) % 10 !== 5) {
    arrivals.push({ p: packets[i + 1], at: i * 20 }, { p: packets[i], at: i * 20 + 5 });
    i++;
    continue;
  }
  arrivals.push({ p: packets[i], at: i * 20 });
  if (i % 23 === 0) arrivals.push({ p: packets[i], at: i * 20 + 2 });
}

function time(label: string, run: () => void, rounds = 10): void {
  run(); // warm up
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) run();
  const ms = (performance.now() - t0) / rounds;
  console.log(
    `${label}: ${ms.toFixed(1)} ms per minute of caller audio (${
      (ms / 600).toFixed(3)
    } % of a core)`,
  );
}

time("jitter buffer alone", () => {
  const b = new JitterBuffer();
  for (const { p, at } of arrivals) b.push(p.seq, p.ts, p.payload, at);
  b.flush();
});
time("decode as arrived (old path)", () => {
  const d = new OpusDecoder({ sampleRate: 16000 });
  for (const { p } of arrivals) d.decode(p.payload);
  d.close();
});
time("jitter buffer + conversation decoder (call.ts today)", () => {
  const b = new JitterBuffer();
  const d = new OpusDecoder({ sampleRate: 16000 });
  const play = (slots: { payload?: Uint8Array }[]) => {
    for (const s of slots) d.decode(s.payload ?? new Uint8Array(0));
  };
  for (const { p, at } of arrivals) play(b.push(p.seq, p.ts, p.payload, at));
  play(b.flush());
  d.close();
});
const receiver = receiverMs(arrivals);
console.log(
  `CallerReceiver (buffer, decode, FEC, concealment): ${
    receiver.toFixed(1)
  } ms per minute of caller audio (${(receiver / 600).toFixed(3)} % of a core)`,
);
