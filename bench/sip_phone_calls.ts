// Phone calls through a real worker process: SIPp 3.6 dials each call with its own session token
// (from sessions.connect, fed to SIPp by -inf) in the Request-URI, as the control plane's 302 would
// hand it out. Each answered call runs the whole pipeline: admission (token checked, spent), the
// brain dialled, the greeting synthesised and sent as paced μ-law RTP to SIPp's media port, VAD and
// recognition on the (silent) caller side, the session record written at the BYE.
// Measures INVITE → 200 at the peer, and the worker process's CPU and peak RSS over the run.
// Run: deno run -A bench/sip_phone_calls.ts
// Environment: SIP_BENCH_CALLS (40), SIP_BENCH_RATE (calls/s, 2), SIP_BENCH_HOLD_MS (6000).
import { makeTenant, startTestApi } from "../tests/helpers/api_server.ts";
import { startWorkerProcess } from "../tests/helpers/process.ts";
import { freeUdpPort } from "../tests/helpers/sipp.ts";
import { NO_BODY, request, sdpOffer, XML_HEAD } from "../tests/helpers/sipp_scenario.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { cpuSeconds, statusKb } from "./media/proc.ts";

const CALLS = Number(Deno.env.get("SIP_BENCH_CALLS") ?? 40);
const RATE = Number(Deno.env.get("SIP_BENCH_RATE") ?? 2);
const HOLD_MS = Number(Deno.env.get("SIP_BENCH_HOLD_MS") ?? 6000);

const brain = createBrain({
  onSessionStart: () => "Hello, this is the hotel desk. How can I help?",
  onTurn: (turn) => `You said ${turn.text}.`,
});
const sipPort = await freeUdpPort();
const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
// Every session is connected before SIPp starts: no per-key limits on this API.
const api = await startTestApi({ RATE_LIMIT_PER_SECOND: "0", PENDING_SESSIONS_PER_KEY: "0" }, {
  node: false,
});
const worker = await startWorkerProcess(api.db.url, undefined, {
  SIP_PORT: String(sipPort),
  WORKER_CAPACITY: String(CALLS + 10),
  RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "recordings-" }),
});
const tenant = await makeTenant(api, "acme", { brain_url: served.url });
const dir = await Deno.makeTempDir({ prefix: "sip-phone-bench-" });
try {
  const tokens: string[] = [];
  for (let i = 0; i < CALLS; i++) {
    const r = await api.post("/api/v1/sessions.connect", { agent_id: tenant.agent_id }, tenant.sk);
    if (r.status !== 200) throw new Error(`connect: ${r.status}`);
    tokens.push(r.body.webrtc_request_params.headers.Authorization.replace(/^Bearer /, ""));
  }
  await Deno.writeTextFile(`${dir}/tokens.csv`, `SEQUENTIAL\n${tokens.join("\n")}\n`);
  await Deno.writeTextFile(`${dir}/phone.xml`, scenario());
  const pid = worker.child.process.pid;
  const cpuBefore = cpuSeconds(pid);
  const rssBefore = statusKb(pid, "VmRSS");
  const started = performance.now();
  const out = await new Deno.Command("/usr/bin/sipp", {
    args: [
      `127.0.0.1:${sipPort}`,
      ...["-sf", `${dir}/phone.xml`, "-inf", `${dir}/tokens.csv`, "-s", "+15550100"],
      ...["-r", String(RATE), "-m", String(CALLS), "-i", "127.0.0.1", "-p", "0"],
      ...["-mp", String(await freeUdpPort()), "-nostdin", "-timeout", "600"],
      ...["-trace_rtt", "-rtt_freq", "1", "-trace_err", "-error_file", `${dir}/err.log`],
    ],
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).output();
  const wallS = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(pid) - cpuBefore;
  const peak = statusKb(pid, "VmHWM");
  const rttFile = [...Deno.readDirSync(dir)].find((f) => f.name.endsWith("_rtt.csv"));
  const setups = rttFile
    ? Deno.readTextFileSync(`${dir}/${rttFile.name}`).trim().split("\n").slice(1)
      .map((l) => Number(l.split(";")[1])).filter((n) => Number.isFinite(n)).sort((a, b) => a - b)
    : [];
  const pct = (p: number) => setups[Math.min(setups.length - 1, Math.floor(p * setups.length))];
  console.log(
    `Phone calls through a worker: ${CALLS} calls at ${RATE}/s, held ${HOLD_MS} ms (about ${
      Math.round(RATE * HOLD_MS / 1000)
    } at once)`,
  );
  console.log(`  sipp exit ${out.code} (0: every call passed its scenario)`);
  if (out.code !== 0) console.log(await Deno.readTextFile(`${dir}/err.log`).catch(() => ""));
  console.log(
    `  INVITE → 200 at the peer: p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${
      setups.at(-1)
    } ms (n=${setups.length}; SIPp measures whole ms)`,
  );
  console.log(
    `  worker CPU ${(cpu / wallS * 100).toFixed(1)} % of a core over ${wallS.toFixed(1)} s, ${
      (cpu / CALLS * 1000).toFixed(0)
    } ms per call; RSS ${(rssBefore / 1024).toFixed(0)} MiB before, peak ${
      (peak / 1024).toFixed(0)
    } MiB`,
  );
} finally {
  await Deno.remove(dir, { recursive: true });
  await worker.stop();
  await api.close();
  await served.shutdown();
}

function scenario(): string {
  // In the dialog: to the Contact of the 200 ([next_url]) with its To.
  const inDialog = (method: string, cseq: number) =>
    request(method, cseq, { uri: "[next_url]", to: "[last_To:]", contact: false }) + NO_BODY;
  return `${XML_HEAD}
<scenario name="phone-bench">
  <send retrans="500"><![CDATA[${
    request("INVITE", 1, { uri: "sip:[service]@[remote_ip]:[remote_port];session=[field0]" }) +
    sdpOffer([0, 101])
  }]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rtd="true" rrs="true"/>
  <send><![CDATA[${inDialog("ACK", 1)}]]></send>
  <pause milliseconds="${HOLD_MS}"/>
  <send retrans="500"><![CDATA[${inDialog("BYE", 2)}]]></send>
  <recv response="200" crlf="true"/>
</scenario>`;
}
