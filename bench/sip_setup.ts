// SIP call setup (INVITE sent → 200 OK received at the peer) against the UAS of media/sip/, with
// SIPp 3.6 (/usr/bin/sipp) as the caller: its built-in `uac` scenario (INVITE, 180, 200, ACK, hold,
// BYE) at a fixed call rate, so concurrent calls build up to rate × hold. Signalling only: no RTP
// flows and no call pipeline runs yet (docs/sip.md), so this is the floor a phone call's setup adds.
// Run: deno run -A bench/sip_setup.ts
// Environment: SIP_BENCH_RATE (calls/s, 25), SIP_BENCH_CALLS (500), SIP_BENCH_HOLD_MS (2000).
import process from "node:process";
import { SipUas } from "../media/sip/uas.ts";
import { percentile } from "./harness/stats.ts";

const RATE = Number(Deno.env.get("SIP_BENCH_RATE") ?? 25);
const CALLS = Number(Deno.env.get("SIP_BENCH_CALLS") ?? 500);
const HOLD_MS = Number(Deno.env.get("SIP_BENCH_HOLD_MS") ?? 2000);

let active = 0, peak = 0, answered = 0, ended = 0;
const uas = new SipUas({
  host: "127.0.0.1",
  lookup: () => ({ agentId: "bench" }),
  onEvent: (e) => {
    if (e.type === "answered") {
      answered++;
      peak = Math.max(peak, ++active);
    } else if (e.type === "ended") {
      ended++;
      active--;
    }
  },
});
const port = await uas.listen();
const dir = await Deno.makeTempDir({ prefix: "sip-bench-" });
const cpuBefore = process.cpuUsage();
const rssBefore = Deno.memoryUsage().rss;
const started = performance.now();
const out = await new Deno.Command("/usr/bin/sipp", {
  args: [
    `127.0.0.1:${port}`,
    ...["-sn", "uac", "-s", "+15550100", "-r", String(RATE), "-m", String(CALLS)],
    ...["-d", String(HOLD_MS), "-i", "127.0.0.1", "-p", "0", "-nostdin", "-timeout", "300"],
    ...["-trace_rtt", "-rtt_freq", "1", "-trace_stat", "-stf", `${dir}/stat.csv`],
  ],
  cwd: dir,
  stdout: "null",
  stderr: "piped",
}).output();
const wallS = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const rss = Deno.memoryUsage().rss;
await uas.close();

// SIPp writes `<scenario>_<pid>_rtt.csv`: Date_ms;response_time_ms;rtd_no (header line first).
const rttFile = [...Deno.readDirSync(dir)].find((f) => f.name.endsWith("_rtt.csv"));
const setups = rttFile
  ? Deno.readTextFileSync(`${dir}/${rttFile.name}`).trim().split("\n").slice(1)
    .map((l) => Number(l.split(";")[1])).filter((n) => Number.isFinite(n)).sort((a, b) => a - b)
  : [];
await Deno.remove(dir, { recursive: true });
const pct = (p: number) => (setups.length ? percentile(setups, p) : undefined);

console.log(`SIP setup against the UAS: ${CALLS} calls at ${RATE}/s, held ${HOLD_MS} ms`);
console.log(`  sipp exit ${out.code} (0: every call passed its scenario)`);
console.log(`  answered ${answered}, ended by the caller's BYE ${ended}, peak concurrent ${peak}`);
console.log(
  `  INVITE → 200 at the peer: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${
    setups.at(-1)
  } ms (n=${setups.length}; SIPp measures whole ms)`,
);
console.log(
  `  UAS process CPU ${((cpu.user + cpu.system) / 1000 / wallS / 10).toFixed(1)} % of a core over ${
    wallS.toFixed(1)
  } s, ${((cpu.user + cpu.system) / Math.max(1, answered)).toFixed(0)} µs per call; RSS ${
    (rssBefore / 2 ** 20).toFixed(0)
  } → ${(rss / 2 ** 20).toFixed(0)} MiB`,
);
if (out.code !== 0) Deno.exit(1);
