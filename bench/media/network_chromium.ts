// network.ts's Chromium rows: Debian Chromium in a network namespace of the bench's own
// (tests/helpers/netns.ts), the demo page calling a real worker across a veth pair, its UDP
// shaped by iptables inside the namespace, as the browser test
// chromium_behind_a_lossy_or_udp_blocked_network_sees_the_real_end.test.ts does. One namespace,
// one service and one browser serve every row; each call is a fresh page.
//
// A call: the greeting; one spoken turn (the fake microphone loops 10 s of quiet, a festival
// sentence, 8 s of quiet), answered; then the page sends "bye" and the brain ends the call.
// Completed = the greeting, the reply and the call's end (brain_ended) all reached the page.
import { type CallService, startCallService } from "../../tests/helpers/call_harness.ts";
import { httpForwardProxy } from "../../tests/helpers/http_forward_proxy.ts";
import { callerSpeechWav } from "../../tests/helpers/audio.ts";
import { makeNetns, type Netns } from "../../tests/helpers/netns.ts";
import { createBrain } from "../../sdk/brain/mod.ts";
import { buildDemoPage } from "../../web/build.ts";
import type { CallState } from "../../web/call/call.ts";
import type { BotUnit, TranscriptLine } from "../../web/call/conversation.ts";
import {
  type Browser,
  CHROMIUM,
  launchChromium,
  waitForPage,
} from "../../tests/browser/helpers/chromium.ts";
import { serveStatic } from "../../tests/browser/helpers/static_server.ts";
import { gilbertStep, mulberry32 } from "../../caller/lossy_link.ts";
import type { Page } from "playwright-core";
import { setTimeout as sleep } from "node:timers/promises";

const GREETING = "Hello. Say something, then send bye.";

/** How a row shapes the namespace's UDP; returns a stop for shaping that runs on a clock. */
export type Shape =
  | { kind: "none" }
  | { kind: "random"; loss: number }
  | { kind: "bursty"; loss: number; burst: number; seed: number }
  | { kind: "udp-blocked" };

export interface ChromiumCall {
  completed: boolean;
  failure?: string;
  sessionId?: string;
  /** The page saw the call-ended notice (brain_ended) and the worker's drain was acknowledged. */
  endSeen: boolean;
  workerDelivered?: boolean;
  drainMs?: number;
  endReason?: string;
  said: string;
  heard?: string;
  /** The page's own end of speech → first bot audio (web/call/latency.ts). */
  latencyMs?: number;
  recordingSeconds?: number;
  callSeconds?: number;
  /** Bursty rows: the share of 20 ms slots the rule dropped everything in. */
  shapedShare?: number;
  /** The worker's caller_audio entry: what it received, lost, recovered. */
  callerAudio?: Record<string, number>;
}

interface Snapshot {
  state?: CallState;
  bot: BotUnit[];
  transcript: TranscriptLine[];
  latency: { ms: number }[];
}

function snapshot(page: Page): Promise<Snapshot> {
  return page.evaluate(() => {
    const p = (globalThis as unknown as {
      callPage: {
        call?: { state: CallState };
        conversation: { bot: BotUnit[]; transcript: TranscriptLine[] };
        latency: { turns: { ms: number }[] };
      };
    }).callPage;
    return JSON.parse(JSON.stringify({
      state: p.call?.state,
      bot: p.conversation.bot,
      transcript: p.conversation.transcript,
      latency: p.latency.turns,
    }));
  });
}

export interface ChromiumBench {
  call(shape: Shape, sentence: string): Promise<ChromiumCall>;
  workerPid: number;
  close(): Promise<void>;
}

async function micWav(sentence: string): Promise<string> {
  const speech = await callerSpeechWav(sentence, 0.3);
  const out = await Deno.makeTempFile({ prefix: "net-mic-", suffix: ".wav" });
  const sox = await new Deno.Command("sox", { args: [speech, out, "pad", "10", "8"] }).output();
  if (!sox.success) throw new Error(new TextDecoder().decode(sox.stderr));
  return out;
}

/** Drops all UDP both ways in 20 ms slots chosen by a Gilbert model; resolves the share. */
function burstyDrops(ns: Netns, loss: number, burst: number, seed: number) {
  const random = mulberry32(seed);
  let bad = false, slots = 0, badSlots = 0, stopped = false;
  const rule = (op: "-I" | "-D") =>
    Promise.all(["INPUT", "OUTPUT"].map((c) => ns.iptables(op, c, "-p", "udp", "-j", "DROP")));
  const done = (async () => {
    let next = performance.now();
    while (!stopped) {
      const was: boolean = bad;
      bad = gilbertStep(bad, loss, burst, random());
      slots++;
      if (bad) badSlots++;
      if (bad !== was) await rule(bad ? "-I" : "-D");
      next += 20;
      await sleep(Math.max(0, next - performance.now()));
    }
    if (bad) await rule("-D");
    return slots ? badSlots / slots : 0;
  })();
  return { stop: () => (stopped = true, done) };
}

export async function startChromiumBench(): Promise<ChromiumBench> {
  const dist = await buildDemoPage();
  const brain = createBrain({
    onSessionStart: () => GREETING,
    async *onTurn(turn) {
      yield `You said: ${turn.text}`;
    },
    onRtvi: (message, session) => {
      if ((message.data as { t?: unknown } | undefined)?.t === "bye") session.end();
    },
  });
  const ns = await makeNetns();
  const proxy = httpForwardProxy(ns.hostIp);
  let service: CallService | undefined;
  let site: ReturnType<typeof serveStatic> | undefined;
  const close = async () => {
    await site?.close();
    await service?.close();
    await proxy.close();
    await ns.close();
  };
  try {
    service = await startCallService(brain, {
      record_by_default: true,
      workerEnv: { ICE_ADDRESSES: ns.hostIp },
    });
    const files: Record<string, string> = {};
    site = serveStatic(dist, { files, proxy: { prefix: "/api/", to: service.api.url } });
    const key = await service.api.admin("/api/v1/keys.create", {
      agent_id: service.tenant.agent_id,
      kind: "publishable",
      allowed_origins: [site.origin],
    });
    if (key.status !== 200) throw new Error(`keys.create: ${JSON.stringify(key.body)}`);
    files["/demo-config.js"] = `globalThis.CALL_CONFIG = ${
      JSON.stringify({ publishableKey: key.body.session_key, agentId: service.tenant.agent_id })
    };`;
  } catch (e) {
    await close();
    throw e;
  }
  const svc = service, origin = site.origin;

  return {
    workerPid: svc.worker.child.process.pid,
    close,
    async call(shape, sentence) {
      const out: ChromiumCall = { completed: false, endSeen: false, said: sentence };
      const wav = await micWav(sentence);
      let browser: Browser | undefined;
      let bursts: ReturnType<typeof burstyDrops> | undefined;
      try {
        browser = await launchChromium({
          fakeMicWav: wav,
          executablePath: await ns.wrapper(CHROMIUM),
          proxy: { server: proxy.address, bypass: [ns.hostIp] },
        });
        const page = await browser.open(`${origin}/`);
        await page.evaluate(() =>
          (globalThis as unknown as { callPage: { ready: Promise<void> } }).callPage.ready
        );
        if (shape.kind === "random") {
          for (const chain of ["INPUT", "OUTPUT"]) {
            await ns.iptables(
              ...["-A", chain, "-p", "udp", "-m", "statistic", "--mode", "random"],
              ...["--probability", String(shape.loss), "-j", "DROP"],
            );
          }
        } else if (shape.kind === "udp-blocked") {
          for (const chain of ["INPUT", "OUTPUT"]) {
            await ns.iptables("-A", chain, "-p", "udp", "-j", "DROP");
          }
        } else if (shape.kind === "bursty") {
          bursts = burstyDrops(ns, shape.loss, shape.burst, shape.seed);
        }
        await page.click("#call");
        const greeted = (s: Snapshot) =>
          s.bot.some((u) => u.text === GREETING && u.status === "completed");
        let s = await waitForPage(page, snapshot, greeted, 45_000);
        out.sessionId = s.state?.sessionId;
        if (!greeted(s)) throw new Error(`no greeting (${s.state?.phase})`);
        const replied = (s: Snapshot) =>
          s.bot.some((u) => u.text.startsWith("You said") && u.status === "completed");
        s = await waitForPage(page, snapshot, replied, 45_000);
        if (!replied(s)) throw new Error("the spoken turn was not answered");
        out.heard = s.transcript.find((l) => l.final && !l.typed)?.text;
        out.latencyMs = s.latency[0]?.ms;
        await page.fill("#msg-type", "bye");
        await page.fill("#msg-data", "");
        await page.click("#msg-send");
        s = await waitForPage(
          page,
          snapshot,
          (s) => s.state?.end !== undefined || s.state?.phase === "failed",
          30_000,
        );
        out.endSeen = s.state?.end?.reason === "brain_ended";
        if (!out.endSeen) throw new Error(`the end seen: ${JSON.stringify(s.state?.end)}`);
        out.completed = true;
      } catch (e) {
        out.failure = (e as Error).message;
      } finally {
        if (bursts) out.shapedShare = await bursts.stop();
        await ns.iptables("-F", "INPUT").catch(() => {});
        await ns.iptables("-F", "OUTPUT").catch(() => {});
        await browser?.close();
        await Deno.remove(wav).catch(() => {});
      }
      if (out.sessionId) {
        try {
          const record = await svc.record(out.sessionId, "ended", 40_000);
          readRecord(record, out);
        } catch (e) {
          out.failure ??= `no ended record: ${(e as Error).message.split("\n")[0]}`;
        }
      }
      return out;
    },
  };
}

/** What network.ts reads from a session record, for both callers. */
export function readRecord(
  // deno-lint-ignore no-explicit-any
  record: any,
  out: {
    endReason?: string;
    workerDelivered?: boolean;
    drainMs?: number;
    recordingSeconds?: number;
    callSeconds?: number;
    callerAudio?: Record<string, number>;
  },
): void {
  // deno-lint-ignore no-explicit-any
  const entry = (kind: string) => record.log?.find((e: any) => e.kind === kind)?.data;
  out.endReason = `${record.status}/${record.end_reason}`;
  out.workerDelivered = entry("last_messages")?.delivered;
  out.drainMs = entry("last_messages")?.ms;
  out.recordingSeconds = entry("recording_written")?.seconds;
  out.callerAudio = entry("caller_audio");
  const { started_at, ended_at } = record.timings ?? {};
  if (started_at && ended_at) {
    out.callSeconds = (Date.parse(ended_at) - Date.parse(started_at)) / 1000;
  }
}
