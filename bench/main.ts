// `deno task bench`: the benchmarks, one after another, each in its own process so that one's
// JIT state, GC heap and leftover timers cannot colour the next one's figures.
// Run: deno task bench [name ...]   (names filter by substring, e.g. `deno task bench connect`)
//
// bench/connect_phases.ts (where a connect's time goes), bench/media/opus_choice.ts (the
// one-off codec choice), bench/media/voice_encoding.ts (the bot's voice: encoder settings' cost
// and fidelity), bench/media/pacing_timers.ts (a timer per call against one shared frame clock)
// and bench/media/host_speed.ts (the host probe) are diagnostics and are run by hand, not here.
const BENCHES = [
  "bench/connect.ts",
  "bench/media/echo_calls.ts",
  "bench/media/call_turns.ts",
  // End of speech → first audio at the caller, END_OF_TURN=fixed vs adaptive, backchannels; ~3 min.
  "bench/media/turn_latency.ts",
  "bench/media/provider_calls.ts",
  // Whole scripted calls (local engines vs echo) at 1, 4, 8 and up to the largest N held; ~6 min.
  "bench/media/call_density.ts",
  "bench/media/vad.ts",
  // In-band DTMF: keys heard at levels and noise, false keys per minute of speech, CPU; ~20 s.
  "bench/media/dtmf.ts",
  // Turn-taking over made speech (English + Indic, 16 kHz and G.711 8 kHz): false cut-offs against
  // the wait, backchannels over the bot; ~1 min (bench/turn/main.ts, docs/turn-taking.md).
  "bench/turn/main.ts",
  // Answering machine detection over festival/espeak-ng greetings and openings through G.711; ~15 s
  // (the first run also makes the labelled set, ~10 s more).
  "bench/machine_detection.ts",
  // The brain's InterimText frames for real speech: every hypothesis vs the 250 ms bound; ~2 min.
  "bench/media/brain_events.ts",
  "bench/media/tts.ts",
  // 10 concurrent calls for 10 minutes: leaks show as slopes (SOAK_SECONDS shortens it).
  "bench/media/soak.ts",
  // Phone calls over SIP (SIPp + an RTP phone) beside web calls, 1 to the largest N held; ~5 min.
  "bench/phone_calls.ts",
  // Outbound calls (calls.dial → worker → SIPp as the trunk): answer → first greeting audio beside
  // inbound phone calls, and a 100-contact campaign's calls per minute; ~1 min.
  "bench/outbound.ts",
  // A phone call's INVITE → first greeting audio, fresh worker and warm, step by step; ~2 min.
  "bench/first_greeting.ts",
  // Warm transfer: the bridge's relay against a line's G.711 edge, the whisper's synthesis; ~20 s.
  "bench/warm_transfer.ts",
  // Redaction per turn of text (issue 37) against copying it; ~10 s.
  "bench/redaction.ts",
  // Tracing (issue 37): a call's turns traced with no endpoint (baseline) and exporting over
  // OTLP/HTTP to loopback: µs per turn and per call, export per call, bytes; ~10 s.
  "bench/traces.ts",
  // Signed webhooks: the session end write with and without an endpoint, end → receiver, and a
  // backlog's drain rate; ~30 s.
  "bench/webhooks.ts",
  // A recording to the agent's bucket (local S3 server) against writing the local file; ~30 s.
  "bench/storage.ts",
  // Phone lines that echo the bot back (`deno task bench line_echo`): echo cancellation off vs on,
  // 20 calls of 12 s; ~6 min.
  "bench/line_echo.ts",
];
// Run only when named (`deno task bench network`): ~15 minutes of calls over impaired networks,
// Chromium in a network namespace among them (needs root, `ip` and iptables).
const OPT_IN = ["bench/media/network.ts"];

const root = new URL("../", import.meta.url);
// A bench named exactly (`turn` for bench/turn/main.ts) runs alone, not every name containing it.
const nameOf = (b: string) => b.replace(/^bench\/(media\/)?/, "").replace(/(\/main)?\.ts$/, "");
const exact = [...BENCHES, ...OPT_IN].filter((b) => Deno.args.includes(nameOf(b)));
const wanted = exact.length
  ? exact
  : Deno.args.length
  ? [...BENCHES, ...OPT_IN].filter((b) => Deno.args.some((a) => b.includes(a)))
  : BENCHES;
if (wanted.length === 0) {
  console.error(
    `no benchmark matches ${Deno.args.join(" ")}; known: ${[...BENCHES, ...OPT_IN].join(", ")}`,
  );
  Deno.exit(2);
}

const failed: string[] = [];
for (const bench of wanted) {
  const path = new URL(bench, root).pathname;
  try {
    await Deno.stat(path);
  } catch {
    console.log(`\n== ${bench}: not present, skipped`);
    continue;
  }
  console.log(`\n== ${bench}`);
  const started = performance.now();
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", path],
    cwd: root.pathname,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(`== ${bench}: ${code === 0 ? "done" : `FAILED (exit ${code})`} in ${seconds} s`);
  if (code !== 0) failed.push(bench);
}
if (failed.length) {
  console.error(`\nfailed: ${failed.join(", ")}`);
  Deno.exit(1);
}
