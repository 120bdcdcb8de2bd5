// Outbound calls (issue 34) the whole way: POST /api/v1/calls.dial on the real API → a real worker
// process with SIP (media/main.ts, the local engines) → SIPp 3.6 as the trunk, and a campaign
// through the API's own scheduler. Figures, not assertions.
//
// (a) Dial → answer → first greeting audio at the callee. BENCH_OUTBOUND_CALLS calls (20), one
//     every BENCH_OUTBOUND_STAGGER_MS (250), each to its own number; SIPp answers at once (180,
//     200) and hangs up 6 s later. The greeting is released at the answer
//     (`outbound_greeting: {start: "AFTER_DELAY", wait_ms: 0}`; the default waits up to 3 s for
//     the callee's "Hello?"). The callee's media is one UDP socket here, told apart by the worker
//     port that sent it (the INVITE's m= line). Times: the POST → its 202; the POST → the INVITE
//     at the trunk; SIPp's 200 sent (its message log, its own clock) → the first RTP packet louder
//     than BOT_LEVEL at the callee's socket. Baseline, same run and worker: the same number of
//     inbound phone calls (SIPp dials the worker with a sessions.connect token, as
//     `BENCH_PHONE_DIAL=direct` in phone_calls.ts), the 200 SIPp receives → the first loud RTP
//     packet at the phone's socket (tests/helpers/phone_caller.ts).
// (b) Campaign throughput: BENCH_CAMPAIGN_CONTACTS contacts (100) at BENCH_CAMPAIGN_CONCURRENCY
//     (10), one attempt each, through SIPp answering by the number's last digit (1 busy, 2 no
//     answer: CANCEL at the 5 s ring timeout, the rest answered and hung up after 1 s): calls
//     per minute from the create to `done`, and per answered call the claim → the worker's
//     INVITE (`sip/dial` event) and the INVITE → the 200 (`sip/answered`), from the session log.
//
// Percentiles are nearest rank (bench/harness/stats.ts). Wall clocks: SIPp's log and this
// process's performance.timeOrigin + now() are both the machine's clock.
//
// Run: BENCH_DATABASE_URL=postgres://USER:PASS@127.0.0.1:5432/postgres deno run -A bench/outbound.ts
//      (also `deno task bench outbound`; ~2 min)
import dgram from "node:dgram";
import { makeTenant, startTestApi } from "../tests/helpers/api_server.ts";
import {
  freeUdpPort,
  runSipp,
  type SippTrunkServer,
  startSippTrunk,
} from "../tests/helpers/sipp.ts";
import { answersByLastDigit } from "../tests/helpers/sipp_trunk.ts";
import { inDialog, phoneInvite, XML_HEAD } from "../tests/helpers/sipp_scenario.ts";
import { PhoneCaller } from "../tests/helpers/phone_caller.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { openDatabase } from "../db/client.ts";
import { parseRtp } from "../media/phone/rtp_packet.ts";
import { g711Decode } from "../media/phone/g711.ts";
import { rms } from "../caller/wav.ts";
import { BOT_LEVEL } from "../caller/turn_latency.ts";
import { localTime } from "../common/calling_window.ts";
import { percentile } from "./harness/stats.ts";
import { createBenchDatabase } from "./harness/database.ts";
import { startBenchWorker } from "./harness/worker.ts";
import { connectSession } from "./harness/session.ts";
import { setTimeout as sleep } from "node:timers/promises";

const CALLS = Number(Deno.env.get("BENCH_OUTBOUND_CALLS") ?? 20);
const STAGGER_MS = Number(Deno.env.get("BENCH_OUTBOUND_STAGGER_MS") ?? 250);
const CONTACTS = Number(Deno.env.get("BENCH_CAMPAIGN_CONTACTS") ?? 100);
const CONCURRENCY = Number(Deno.env.get("BENCH_CAMPAIGN_CONCURRENCY") ?? 10);
const HOLD_MS = 6_000;
const OUR_NUMBER = "+14155550100";
const GREETING = "Hello, this is the hotel calling about your booking.";

const wall = () => performance.timeOrigin + performance.now();
const loud = (payload: Uint8Array) => rms(g711Decode("PCMU", payload)) > BOT_LEVEL;

interface Logged {
  at: number;
  dir: "sent" | "received";
  text: string;
}

/** SIPp's message log (-trace_msg): each message with its wall-clock time (ms since the epoch). */
function sippLog(messages: string): Logged[] {
  const out: Logged[] = [];
  for (const chunk of messages.split(/^-{20,} /m)) {
    const m =
      /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.(\d+)\s*\n\s*\w+ message (sent|received)[^\n]*\n+/
        .exec(chunk);
    if (!m) continue;
    out.push({
      at: Date.parse(`${m[1]}T${m[2]}Z`) + Number(`0.${m[3]}`) * 1000,
      dir: m[4] as "sent" | "received",
      text: chunk.slice(m[0].length).trimStart(),
    });
  }
  return out;
}
const header = (text: string, name: string) =>
  new RegExp(`^${name}:\\s*(.+?)\\s*$`, "im").exec(text)?.[1];

const pct = (xs: number[], p: number) =>
  xs.length ? percentile([...xs].sort((a, b) => a - b), p).toFixed(0) : "–";
const line = (name: string, xs: number[], of: number) =>
  `  ${name}: p50 ${pct(xs, 50)} ms, p99 ${pct(xs, 99)} ms, max ${
    pct(xs, 100)
  } ms (n=${xs.length} of ${of})`;

const brain = createBrain({ onSessionStart: () => GREETING, onTurn: () => "Thank you." });
const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
const bench = await createBenchDatabase("bench_outbound");
const db = await openDatabase({ url: bench.url, max: 10 });
// Many calls from one key, trunk and source at once: the caps on calls not yet started are off.
const api = await startTestApi({
  PENDING_SESSIONS_PER_KEY: "0",
  PENDING_SESSIONS_PER_TRUNK: "0",
  PENDING_SESSIONS_PER_SOURCE: "0",
}, { db, node: false });
const sipPort = await freeUdpPort();
const worker = await startBenchWorker(bench.url, {
  env: { SIP_PORT: String(sipPort), LOG_LEVEL: "warn" },
});
const tenant = await makeTenant(api, "bench", { brain_url: served.url });
let trunkServer: SippTrunkServer | undefined;

try {
  // --- Baseline: inbound phone calls, answer → first greeting audio at the phone.
  const inboundScenario = (token: string, rtpPort: number) =>
    `${XML_HEAD}<scenario name="inbound">${
      phoneInvite(OUR_NUMBER, `sip:${OUR_NUMBER}@[remote_ip]:[remote_port];session=${token}`, 1, [
        0,
        101,
      ], { port: rtpPort, address: "127.0.0.1", fmtp: true, direction: "sendrecv" })
    }
  <recv response="180" optional="true"/>
  <recv response="183" optional="true"/>
  <recv response="200" rrs="true">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="to,wtag"/></action>
  </recv>
  <Reference variables="to"/>
  ${inDialog("ACK", 1, OUR_NUMBER)}
  <pause milliseconds="${HOLD_MS}"/>
  ${inDialog("BYE", 2, OUR_NUMBER)}
  <recv response="200"/>
</scenario>`;
  const inbound = await Promise.all(Array.from({ length: CALLS }, async (_, i) => {
    await sleep(i * STAGGER_MS);
    const phone = await PhoneCaller.open();
    try {
      const s = await connectSession(api, tenant);
      const token = s.headers.Authorization.replace(/^Bearer /, "");
      const sipp = runSipp(inboundScenario(token, phone.port), sipPort, OUR_NUMBER, "udp", [
        "-timeout",
        "60",
      ]);
      await phone.start(30_000).catch(() => {});
      const run = await sipp;
      const ok = sippLog(run.messages).find((m) =>
        m.dir === "received" && /^SIP\/2\.0 200/.test(m.text) &&
        /INVITE/.test(header(m.text, "CSeq") ?? "")
      );
      const first = phone.heard.find((h) => h.payloadType === 0 && loud(h.payload));
      return ok && first ? performance.timeOrigin + first.at - ok.at : undefined;
    } finally {
      await phone.close();
    }
  }));
  const inboundMs = inbound.filter((x): x is number => x !== undefined);

  // --- (a) Outbound: calls.dial → worker → SIPp, each to its own number, all answered.
  const trunkPort = await freeUdpPort();
  const callee = dgram.createSocket("udp4");
  const firstLoud = new Map<number, number>(); // worker RTP port → first loud packet (wall ms)
  callee.on("message", (m, rinfo) => {
    const at = wall();
    const p = parseRtp(new Uint8Array(m));
    if (typeof p === "string" || p.payloadType !== 0) return;
    if (!firstLoud.has(rinfo.port) && loud(p.payload)) firstLoud.set(rinfo.port, at);
  });
  await new Promise<void>((ok) => callee.bind(0, "127.0.0.1", ok));
  trunkServer = await startSippTrunk(answersByLastDigit(callee.address().port, HOLD_MS), trunkPort);
  const trunk = await api.admin("/api/v1/trunks.create", {
    name: "sipp",
    allowed_sources: ["127.0.0.1"],
    outbound_address: `127.0.0.1:${trunkPort}`,
  });
  if (trunk.status !== 200) throw new Error(`trunks.create: ${JSON.stringify(trunk.body)}`);
  const number = await api.admin("/api/v1/numbers.create", {
    number: OUR_NUMBER,
    agent_id: tenant.agent_id,
    trunk_id: trunk.body.trunk.trunk_id,
  });
  if (number.status !== 200) throw new Error(`numbers.create: ${JSON.stringify(number.body)}`);
  const to = (i: number) => `+4420710${String(i * 10 + 5).padStart(5, "0")}`; // ends in 5: answered
  const posts = await Promise.all(Array.from({ length: CALLS }, async (_, i) => {
    await sleep(i * STAGGER_MS);
    const postAt = wall();
    const r = await api.post("/api/v1/calls.dial", {
      agent_id: tenant.agent_id,
      to: to(i),
      from: OUR_NUMBER,
      config: { outbound_greeting: { start: "AFTER_DELAY", wait_ms: 0 } },
    }, tenant.sk);
    return { to: to(i), postAt, acceptedAt: wall(), status: r.status, body: r.body };
  }));
  const refused = posts.filter((p) => p.status !== 202);
  // Every call is answered and hung up HOLD_MS later; wait for the sessions to end.
  const ids = posts.filter((p) => p.status === 202).map((p) => p.body.session_id as string);
  for (let t = 0; t < 120; t++) {
    const [{ open }] = await db.sql<{ open: number }[]>`select count(*)::int as open from sessions
      where id = any(${ids}) and status not in ('ended', 'failed', 'expired')`;
    if (open === 0) break;
    await sleep(500);
  }
  const run = await trunkServer.stop();
  trunkServer = undefined;
  const log = sippLog(run.messages);
  const toPost = [], setupMs = [], answerToAudio = [], postToAudio = [];
  for (const p of posts.filter((p) => p.status === 202)) {
    toPost.push(p.acceptedAt - p.postAt);
    const invite = log.find((m) =>
      m.dir === "received" && m.text.startsWith(`INVITE sip:${p.to}@`)
    );
    if (!invite) continue;
    const callId = header(invite.text, "Call-ID");
    const rtpPort = Number(/^m=audio (\d+)/m.exec(invite.text)?.[1]);
    setupMs.push(invite.at - p.postAt);
    const ok = log.find((m) =>
      m.dir === "sent" && /^SIP\/2\.0 200/.test(m.text) && header(m.text, "Call-ID") === callId &&
      /INVITE/.test(header(m.text, "CSeq") ?? "")
    );
    const audio = firstLoud.get(rtpPort);
    if (ok && audio !== undefined) {
      answerToAudio.push(audio - ok.at);
      postToAudio.push(audio - p.postAt);
    }
  }
  await new Promise<void>((ok) => callee.close(() => ok()));

  console.log(
    `Outbound calls: ${CALLS} calls.dial, one every ${STAGGER_MS} ms, SIPp answering at once ` +
      `(${refused.length} refused${
        refused.length ? `: ${JSON.stringify(refused[0].body).slice(0, 200)}` : ""
      })`,
  );
  console.log(line("POST → 202", toPost, CALLS));
  console.log(`    in dialling order: ${toPost.map((x) => x.toFixed(0)).join(" ")}`);
  console.log(line("POST → INVITE at the trunk", setupMs, CALLS));
  console.log(line("200 sent → first greeting audio at the callee", answerToAudio, CALLS));
  console.log(line("POST → first greeting audio at the callee", postToAudio, CALLS));
  console.log(`Baseline, same run: ${CALLS} inbound phone calls (SIPp → worker, direct token)`);
  console.log(line("200 received → first greeting audio at the phone", inboundMs, CALLS));

  // --- (b) A campaign through the API's scheduler.
  const sink = await PhoneCaller.open(); // the answered calls' media goes here, unread
  const zone = ["Asia/Kolkata", "UTC", "Asia/Tokyo"].find((z) =>
    localTime(new Date(), z) < "23:00"
  )!;
  trunkServer = await startSippTrunk(answersByLastDigit(sink.port, 1000), trunkPort);
  const started = wall();
  const created = await api.admin("/api/v1/campaigns.create", {
    agent_id: tenant.agent_id,
    name: "throughput",
    from: OUR_NUMBER,
    concurrency: CONCURRENCY,
    window_start: "00:00",
    window_end: "23:59",
    time_zone: zone,
    max_attempts: 1,
    ring_timeout_seconds: 5,
    contacts: Array.from({ length: CONTACTS }, (_, i) => ({
      number: `+9198200${String(i).padStart(5, "0")}`,
    })),
  });
  if (created.status !== 200) throw new Error(`campaigns.create: ${JSON.stringify(created.body)}`);
  const campaignId = created.body.campaign.campaign_id as string;
  let campaign;
  let most = 0;
  for (;;) {
    const r = await api.admin("/api/v1/campaigns.get", { campaign_id: campaignId });
    campaign = r.body.campaign;
    most = Math.max(most, campaign.progress.attempts.in_progress ?? 0);
    if (campaign.status === "done" || wall() - started > 600_000) break;
    await sleep(200);
  }
  const tookS = (wall() - started) / 1000;
  await trunkServer.stop();
  trunkServer = undefined;
  await sink.close();
  const timings = await db.sql<{ claim_to_invite: number; invite_to_answer: number }[]>`
    select extract(epoch from (d.at - a.started_at)) * 1000 as claim_to_invite,
      extract(epoch from (an.at - d.at)) * 1000 as invite_to_answer
    from campaign_attempts a
    join session_events d on d.session_id = a.session_id and d.source = 'sip' and d.kind = 'dial'
    join session_events an on an.session_id = a.session_id and an.source = 'sip'
      and an.kind = 'answered'
    where a.campaign_id = ${campaignId}`;
  console.log(
    `Campaign: ${CONTACTS} contacts at concurrency ${CONCURRENCY}, one attempt each, ` +
      `ring timeout 5 s, answered calls hung up after 1 s: ${campaign.status} in ${
        tookS.toFixed(1)
      } s`,
  );
  console.log(`  outcomes ${JSON.stringify(campaign.progress.attempts)}`);
  console.log(
    `  ${(CONTACTS / tookS * 60).toFixed(0)} calls per minute; most in progress at once ${most}`,
  );
  console.log(
    line(
      "claim → INVITE sent (answered calls)",
      timings.map((t) => Number(t.claim_to_invite)),
      CONTACTS,
    ),
  );
  console.log(
    line("INVITE → 200 (answered calls)", timings.map((t) => Number(t.invite_to_answer)), CONTACTS),
  );
} finally {
  await trunkServer?.stop();
  await worker.stop();
  await api.close();
  await db.close();
  await bench.drop();
  await served.shutdown();
}
