// End of the caller's speech → the bot's first audio at the provider, over each provider's media
// stream: the whole service in this process (API, worker with the local engines, an SDK brain
// that answers at once), the FAKE provider of tests/fakes/ placing the call through the webhook
// and streaming festival speech at 8 kHz in real time. Per turn: the time the fake sent the last
// loud 20 ms of the caller's sentence, to the arrival of the first loud 20 ms of the answer.
//   deno run -A bench/media/phone_stream_turns.ts        (BENCH_PHONE_TURNS=8 per provider)
import { rms } from "../../caller/wav.ts";
import {
  phoneSpeech,
  type Provider,
  startStreamCallRig,
  until,
} from "../../tests/helpers/stream_phone_call.ts";
import { percentile as pct } from "../harness/stats.ts";

const TURNS = Number(Deno.env.get("BENCH_PHONE_TURNS") ?? 8);
const SENTENCES = ["hello there", "what time is it", "i would like to book a table", "thank you"];

/** Where the speech ends in 8 kHz `pcm`, in ms: after its last 20 ms louder than 300. */
function speechEndMs(pcm: Int16Array): number {
  let end = 0;
  for (let at = 0; at + 160 <= pcm.length; at += 160) if (rms(pcm, at, at + 160) > 300) end = at;
  return (end + 160) / 8;
}

const rows: string[] = [];
for (const provider of ["twilio", "plivo", "exotel"] as Provider[]) {
  const rig = await startStreamCallRig({ reply: () => "Sure, I can help with that." });
  const waits: number[] = [];
  try {
    const { stream } = await rig.dial(provider);
    await until(() => stream.marksPlayed.length >= 1, "the greeting played", 30_000);
    for (let t = 0; t < TURNS; t++) {
      const pcm = await phoneSpeech(SENTENCES[t % SENTENCES.length]);
      const started = performance.now();
      await stream.say(pcm);
      // say() resolves when the last chunk went out: the speech ended speechEndMs into it.
      const spokenEnd = started + speechEndMs(pcm) + (provider === "exotel" ? 100 : 20);
      const marks = stream.marksPlayed.length;
      await until(() => stream.marksPlayed.length > marks, "the answer played", 30_000);
      const first = stream.bot.find((c) => c.at >= spokenEnd && rms(c.pcm) > 300);
      if (first) waits.push(first.at - spokenEnd);
    }
  } finally {
    await rig.close();
  }
  rows.push(
    `| ${provider} | ${waits.length}/${TURNS} | ${pct(waits, 50).toFixed(0)} | ${
      Math.max(...waits).toFixed(0)
    } |`,
  );
}
console.log("| provider | turns answered | p50 ms | max ms |\n|---|---|---|---|");
for (const r of rows) console.log(r);
Deno.exit(0);
