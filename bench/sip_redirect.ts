// Node choice for phone calls, measured: INVITE sent → 302 received at the caller, against the
// control plane's SIP redirect server (api/sip/) over the real API service and database, for a
// trunk checked by source address (one round trip) and one checked by digest (INVITE, 401, ACK,
// INVITE with credentials, 302: from the first INVITE). Every 302 is a whole connect: number
// lookup, node choice and reservation in one statement, an EdDSA session token.
// For comparison, with KAMAILIO=1: Kamailio 5.6's dispatcher (Debian `kamailio`) relaying the
// INVITE statefully (tm) to media/sip's UAS, INVITE → 200 through the proxy, next to INVITE → 200
// straight at the UAS (bench/sip_kamailio.ts).
// Run: deno run -A bench/sip_redirect.ts   (DATABASE_URL: a PostgreSQL server; else PGlite)
// Environment: SIP_BENCH_RATE (calls/s, 50), SIP_BENCH_CALLS (500), KAMAILIO (1: also Kamailio).
import { startApiService } from "../api/service.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import { digestCredentials } from "../api/sip/digest.ts";
import { loadSettings } from "../common/settings.ts";
import { setQuiet } from "../common/log.ts";
import { createAgent } from "../db/agents.ts";
import { heartbeat, registerNode } from "../db/nodes.ts";
import { createPhoneNumber } from "../db/phone_numbers.ts";
import { createTrunk } from "../db/trunks.ts";
import { SipUas } from "../media/sip/uas.ts";
import {
  ackOfRefusal,
  NO_BODY,
  request,
  sdpOffer,
  XML_HEAD as HEAD,
} from "../tests/helpers/sipp_scenario.ts";
import { freshDatabase, realPostgresUrl } from "../tests/helpers/database.ts";
import { kamailioDispatcher, kamailioFollowingRedirects } from "./sip_kamailio.ts";
import { percentile } from "./harness/stats.ts";

const RATE = Number(Deno.env.get("SIP_BENCH_RATE") ?? 50);
const CALLS = Number(Deno.env.get("SIP_BENCH_CALLS") ?? 500);
const PASSWORD = "bench trunk password";

const invite = (cseq: number, extra = "") => request("INVITE", cseq, { extra }) + sdpOffer([0]);
const ALLOWLISTED = `${HEAD}<scenario name="redirect">
  <send><![CDATA[${invite(1)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="302"/>
  <send><![CDATA[${ackOfRefusal(1, 3)}]]></send>
</scenario>`;
const DIGEST = `${HEAD}<scenario name="redirect-digest">
  <send><![CDATA[${invite(1)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="401" auth="true"/>
  <send><![CDATA[${ackOfRefusal(1, 3)}]]></send>
  <send><![CDATA[${invite(2, "\n      [authentication]")}]]></send>
  <recv response="100" optional="true"/>
  <recv response="302"/>
  <send><![CDATA[${ackOfRefusal(2, 3)}]]></send>
</scenario>`;

/** A request in the dialog, sent along the Record-Route of the 200. */
const alongRoute = (method: string, cseq: number) =>
  request(method, cseq, { uri: "[next_url]", to: "[last_To:]", routes: true, contact: false }) +
  NO_BODY;
/** A whole call through a proxy: the Record-Route kept, ACK and BYE sent along it to the UAS. */
const THROUGH_PROXY = `${HEAD}<scenario name="through-proxy">
  <send retrans="500"><![CDATA[${invite(1)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true"/>
  <send><![CDATA[${alongRoute("ACK", 1)}]]></send>
  <send retrans="500"><![CDATA[${alongRoute("BYE", 2)}]]></send>
  <recv response="200"/>
</scenario>`;

export interface Timed {
  code: number;
  /** First INVITE sent → the final answer received at the caller, ms, sorted. */
  ms: number[];
}

/**
 * Per call, from SIPp's message log (microsecond timestamps; its own -trace_rtt counts whole
 * milliseconds, too coarse here): the first INVITE sent → the first `final` response received.
 */
function timesFromLog(log: string, final: number): number[] {
  const first = new Map<string, number>();
  const done = new Map<string, number>();
  const blocks = log.split(/^-{20,} (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)$/m);
  for (let i = 1; i + 1 < blocks.length; i += 2) {
    const at = Date.parse(blocks[i].replace(" ", "T").slice(0, 23) + "Z") +
      Number(`0.${blocks[i].split(".")[1].slice(3)}`);
    const body = blocks[i + 1];
    const callId = /^Call-ID:\s*(\S+)/im.exec(body)?.[1];
    if (!callId) continue;
    if (/message sent/.test(body) && /^\s*INVITE /m.test(body) && !first.has(callId)) {
      first.set(callId, at);
    } else if (
      /message received/.test(body) && new RegExp(`^SIP/2\\.0 ${final} `, "m").test(body) &&
      !done.has(callId)
    ) done.set(callId, at);
  }
  return [...done].filter(([id]) => first.has(id)).map(([id, at]) => at - first.get(id)!)
    .sort((a, b) => a - b);
}

/**
 * Runs a SIPp scenario (or its built-in `uac` when `scenario` is "uac") at RATE for CALLS calls;
 * `final` is the answer timed (302 from the redirect server, 200 from a UAS).
 */
export async function sipp(
  port: number,
  service: string,
  scenario: string,
  final: number,
  extra: string[] = [],
): Promise<Timed> {
  const dir = await Deno.makeTempDir({ prefix: "sip-redirect-bench-" });
  try {
    const which = scenario === "uac"
      ? ["-sn", "uac", "-d", "0"]
      : (Deno.writeTextFileSync(`${dir}/s.xml`, scenario), ["-sf", `${dir}/s.xml`]);
    const out = await new Deno.Command("/usr/bin/sipp", {
      args: [
        `127.0.0.1:${port}`,
        ...which,
        ...["-s", service, "-r", String(RATE), "-m", String(CALLS), "-i", "127.0.0.1", "-p", "0"],
        ...["-nostdin", "-timeout", "300", "-trace_msg", "-message_file", `${dir}/msg.log`],
        ...extra,
      ],
      cwd: dir,
      stdout: "null",
      stderr: "piped",
    }).output();
    const log = await Deno.readTextFile(`${dir}/msg.log`).catch(() => "");
    return { code: out.code, ms: timesFromLog(log, final) };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

export function summary(label: string, t: Timed): string {
  const pct = (p: number) => (t.ms.length ? percentile(t.ms, p).toFixed(2) : undefined);
  return `  ${label}: p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${pct(100)} ms ` +
    `(n=${t.ms.length}, sipp exit ${t.code})`;
}

if (import.meta.main) {
  setQuiet(true);
  const db = await freshDatabase();
  // The 302s are never followed, by design: the caps on calls not yet started are off.
  const settings = loadSettings({
    ADMIN_TOKEN: "adm_bench_0123456789",
    PENDING_SESSIONS_PER_TRUNK: "0",
    PENDING_SESSIONS_PER_SOURCE: "0",
  });
  const api = await startApiService(db, settings);
  const agent = await createAgent(db.sql, { tenant: "bench", name: "Phone", brain_url: "echo:" });
  const byAddress = await createTrunk(db.sql, {
    name: "loopback",
    allowed_sources: ["127.0.0.0/8"],
    credentials: null,
  });
  const byDigest = await createTrunk(db.sql, {
    name: "digest",
    allowed_sources: [],
    credentials: digestCredentials("bench", "voice", PASSWORD),
  });
  for (const [number, trunk] of [["+15550100", byAddress], ["+15550101", byDigest]] as const) {
    await createPhoneNumber(db.sql, {
      number,
      agent_id: agent.agent_id,
      trunk_id: trunk.trunk_id,
      enabled: true,
    });
  }
  const node = {
    node_id: "bench-worker",
    offer_base_url: "http://127.0.0.1:9/",
    capacity: 100_000,
    sip_address: "127.0.0.1",
    sip_port: 5099,
  };
  await registerNode(db.sql, node);
  const beat = setInterval(() => heartbeat(db.sql, node.node_id).catch(() => {}), 2000);
  const sip = await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });

  console.log(
    `SIP redirect server, ${CALLS} calls at ${RATE}/s each, database: ${
      realPostgresUrl ? "PostgreSQL (DATABASE_URL)" : "embedded PGlite"
    }`,
  );
  const plain = await sipp(sip.port, "+15550100", ALLOWLISTED, 302);
  console.log(summary("INVITE → 302, trunk allowlisted by source", plain));
  // SIPp signs `sip:host:port` unless told the Request-URI, which the redirect server checks.
  const digest = await sipp(sip.port, "+15550101", DIGEST, 302, [
    ...["-au", "bench", "-ap", PASSWORD],
    ...["-auth_uri", `+15550101@127.0.0.1:${sip.port}`],
  ]);
  console.log(summary("first INVITE → 302, digest trunk (401, ACK, INVITE again)", digest));
  const [row] = await db.sql`select count(*)::int as n from sessions`;
  console.log(`  sessions written: ${row.n} (one per 302)`);

  if (Deno.env.get("KAMAILIO") === "1") {
    const uas = new SipUas({ host: "127.0.0.1", lookup: () => ({ agentId: "bench" }) });
    const uasPort = await uas.listen();
    const direct = await sipp(uasPort, "+15550100", "uac", 200);
    console.log(summary("INVITE → 200 straight at the UAS (SIPp uac, no hold)", direct));
    const kamailio = await kamailioDispatcher([uasPort]);
    try {
      const proxied = await sipp(kamailio.port, "+15550100", "uac", 200);
      console.log(summary("INVITE → 200 through Kamailio's dispatcher to the UAS", proxied));
    } finally {
      await kamailio.stop();
    }
    // A trunk that does not follow 3xx: Kamailio follows the redirect server's 302 for it, to
    // the worker (this UAS) the 302 names.
    await registerNode(db.sql, { ...node, sip_port: uasPort });
    const follower = await kamailioFollowingRedirects(sip.port);
    try {
      const followed = await sipp(follower.port, "+15550100", THROUGH_PROXY, 200);
      console.log(summary("INVITE → 200 via Kamailio following the 302 to the UAS", followed));
      const [row] = await db.sql`select count(*)::int as n from sessions
        where node_id = ${node.node_id} and status = 'created'`;
      console.log(`  sessions the followed 302s made: ${row.n} (the UAS here does not take them)`);
    } finally {
      await follower.stop();
      await uas.close();
    }
  }
  clearInterval(beat);
  await sip.close();
  await api.close();
  await db.close();
  if (plain.code !== 0 || digest.code !== 0) Deno.exit(1);
}
