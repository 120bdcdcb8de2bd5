// Surface 3: RTVI messages on the call's data channel.
//
// For volume, media/rtvi/session.ts's RtviSession is fed directly, with handlers doing what the
// call's do (media/call/web_line.ts: each frame logged, a refused one by its size and an excerpt;
// the page message is logged and forwarded to the brain as a ClientMessage frame). Per input:
// receive() never throws, no unhandled rejection, every message sent to the page is labelled JSON
// within the 64 KiB the channel takes, no message larger than that even reaches the channel, one
// message in gets at most one answer (a flood gets at most the rate's burst), whatever reaches
// the handlers can be logged (jsonb) and forwarded, and no chat log entry is over 64 KiB.
//
// A smaller sample goes over a real data channel into a worker process: after each input the
// call must still answer a client-message (unless the input said disconnect-bot).
import fc from "fast-check";
import { RtviSession } from "../../../media/rtvi/session.ts";
import { chatLogData } from "../../../media/call/chat_log.ts";
import { MAX_RTVI_MESSAGE_BYTES, overBytes } from "../../../media/rtvi/protocol.ts";
import { encodeServiceFrame } from "../../../proto/frames.ts";
import { setQuiet } from "../../../common/log.ts";
import type { TestCaller } from "../../../caller/caller.ts";
import { type RtviInput, rtviInput } from "../gen/rtvi.ts";
import { installGuard, rss, settle, takeEscapes } from "../guard.ts";
import { Tally } from "../tally.ts";
import { CheckedLog } from "./brain.ts";
import { type Stack, startStack } from "../stack.ts";
import { judgeWorker } from "./offer.ts";

export interface RtviVerdict {
  violations: { kind: string; detail: string }[];
  sent: number;
  /** Page messages whose data the handlers got and the session log could not store. */
  refusedByLog: number;
  /**
   * Chat log entries (media/call/chat_log.ts) that jsonb would refuse: only a frame RTVI took
   * that holds an unpaired surrogate, which a frame decoded from UTF-8 off the wire cannot.
   */
  rawUnstorable: number;
  counts: RtviSession["counts"];
}

/** One input into a fresh RtviSession wired like a call's. */
export async function checkRtviInput(input: RtviInput): Promise<RtviVerdict> {
  const violations: RtviVerdict["violations"] = [];
  const log = new CheckedLog();
  const raw = new CheckedLog();
  let sent = 0;
  let oversizedReachedChannel = 0;
  const page = (text: string) => {
    sent++;
    if (overBytes(text, MAX_RTVI_MESSAGE_BYTES)) {
      oversizedReachedChannel++;
      // What werift's RTCDataChannel.send does with it.
      throw new Error(`max-message-size exceeded: ${text.length} > ${MAX_RTVI_MESSAGE_BYTES}`);
    }
    try {
      const m = JSON.parse(text);
      if (m?.label !== "rtvi-ai") {
        violations.push({ kind: "unlabelled page message", detail: text.slice(0, 200) });
      }
    } catch {
      violations.push({ kind: "page message not JSON", detail: text.slice(0, 200) });
    }
  };
  let seq = 0;
  const session = new RtviSession(page, {
    onClientReady: async () => {
      await Promise.resolve();
    },
    onPageMessage: (m) => {
      log.add("page", m.type, m.data);
      encodeServiceFrame(++seq, "client_message", { json: JSON.stringify(m) });
      return { received: true };
    },
    onDisconnectBot: async () => {
      await Promise.resolve();
    },
    onTrackStatus: () => {},
    onFrame: (text, refusal) => {
      const data = chatLogData(text, refusal);
      raw.add("page", "chat", data);
      const size = typeof data === "string"
        ? data.length
        : data.refused.length + data.excerpt.length;
      if (size > MAX_RTVI_MESSAGE_BYTES) {
        violations.push({
          kind: "a chat log entry over 64 KiB",
          detail: `${size} characters, ${refusal ?? "taken"}: ${text.slice(0, 100)}`,
        });
      }
    },
  });
  const started = performance.now();
  for (const text of input.messages) {
    try {
      session.receive(text);
    } catch (err) {
      violations.push({ kind: "crash", detail: `receive threw: ${(err as Error).stack}` });
    }
  }
  // The rate (20 a second, bursts of 60) refills while a long flood is being read.
  const seconds = (performance.now() - started) / 1000;
  await settle();
  const flood = input.note.startsWith("flood");
  const limit = flood ? 60 + Math.ceil(seconds * 21) + 2 : input.messages.length;
  if (sent > limit) {
    violations.push({
      kind: "more answers than messages",
      detail: `${input.note}: ${sent} sent for ${input.messages.length}`,
    });
  }
  if (oversizedReachedChannel) {
    violations.push({ kind: "a message over 64 KiB reached the channel", detail: input.note });
  }
  for (const r of log.refused) {
    violations.push({
      kind: "a page message the session log cannot store reached the handler",
      detail: `${r.kind}: ${r.why}`,
    });
  }
  return {
    violations,
    sent,
    refusedByLog: log.refused.length,
    rawUnstorable: raw.refused.length,
    counts: session.counts,
  };
}

export async function fuzzRtviDirect(runs: number, seed: number): Promise<Tally> {
  installGuard();
  setQuiet(true);
  const tally = new Tally("rtvi (RtviSession fed directly)");
  const rssBefore = rss();
  const totals = { oversized: 0, junk: 0, refused: 0, rateLimited: 0, outboundDropped: 0 };
  let rawUnstorable = 0;
  let left = runs;
  let i = 0;
  while (left > 0) {
    for (const input of fc.sample(rtviInput, { numRuns: 100, seed: seed + i++ })) {
      if (left <= 0) break;
      const take = { ...input, messages: input.messages.slice(0, left) };
      left -= take.messages.length;
      const v = await checkRtviInput(take);
      tally.inputs += take.messages.length;
      tally.outcome("ok: answers sent to the page", v.sent);
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += v.counts[k];
      rawUnstorable += v.rawUnstorable;
      for (const x of v.violations) tally.fail(x.kind, x.detail);
    }
    for (const e of takeEscapes()) tally.fail(e.kind, e.detail);
  }
  tally.outcome("refused: over 64 KiB", totals.oversized);
  tally.outcome("ignored: not RTVI (junk)", totals.junk);
  tally.outcome("refused: bad id or unstorable data", totals.refused);
  tally.outcome("refused: over the rate", totals.rateLimited);
  tally.figure("answers not sent (over 64 KiB or unserializable)", totals.outboundDropped);
  tally.figure(
    "chat log entries jsonb would refuse (a frame RTVI took with an unpaired surrogate)",
    rawUnstorable,
  );
  tally.memory.push({ process: "this process", beforeBytes: rssBefore, afterBytes: rss() });
  tally.finish();
  return tally;
}

// ---------- over a real data channel ----------

/** Lets the caller send what a browser would refuse to (messages over the answer's limit). */
function liftSendLimit(caller: TestCaller): void {
  // deno-lint-ignore no-explicit-any
  const sctp = (caller.pc as any).sctpTransport;
  sctp?.setRemoteMaxMessageSize?.(0);
}

/**
 * Whether the call still answers a client-message. The probe queues behind what was just sent,
 * which werift's SCTP moves at a few MB/s: the wait grows with the bytes sent.
 */
async function probe(caller: TestCaller, bytesSent: number): Promise<boolean> {
  const waitMs = 1500 + bytesSent / 500; // 0.5 MB/s, a floor for loopback SCTP under load
  for (let i = 0; i < 4; i++) {
    if (caller.chat.readyState !== "open") return false;
    const id = caller.sendRtvi("client-message", { t: "probe" });
    const answered = await caller.waitForMessage((m) => m.id === id, waitMs).then(
      () => true,
      () => false,
    );
    if (answered) return true;
  }
  return false;
}

export async function fuzzRtviLive(
  inputs: number,
  seed: number,
  options: { stack?: Stack } = {},
): Promise<Tally> {
  installGuard();
  const tally = new Tally("rtvi (real data channel into a worker process)");
  const stack = options.stack ?? await startStack();
  const seen = { unexpected: 0, uncaught: 0 };
  let live: { caller: TestCaller; big: string[]; bad: string[] } | undefined;
  let calls = 0;
  try {
    const rssBefore = await stack.workerRss();
    // `inputs` counts messages: sequences are drawn until that many have been sent.
    for (let b = 0; tally.inputs < inputs; b++) {
      const batch = fc.sample(rtviInput, { numRuns: 20, seed: seed + b });
      for (const input of batch) {
        if (tally.inputs >= inputs) break;
        if (!live || live.caller.chat.readyState !== "open") {
          await live?.caller.hangUp();
          const { caller } = await stack.call(stack.echo);
          calls++;
          liftSendLimit(caller);
          const big: string[] = [], bad: string[] = [];
          caller.chat.onMessage.subscribe((d) => {
            const text = typeof d === "string" ? d : new TextDecoder().decode(d);
            if (overBytes(text)) big.push(text.slice(0, 80));
            try {
              JSON.parse(text);
            } catch {
              bad.push(text.slice(0, 80));
            }
          });
          live = { caller, big, bad };
        }
        let sendFailed = 0;
        let bytes = 0;
        for (const text of input.messages) {
          try {
            live.caller.chat.send(text);
            bytes += text.length;
          } catch {
            sendFailed++;
          }
        }
        tally.inputs += input.messages.length - sendFailed;
        const hangsUp = input.messages.some((m) => m.includes('"disconnect-bot"'));
        // Two ways a hand-made client can stall its own call's channel inside werift's SCTP (the
        // worker's werift then delivers nothing more; the call ends no_ping): an empty message,
        // which werift (the test caller) sends as a DATA chunk without user data (RFC 4960 wants
        // an ABORT; browsers send PPID 56 with one byte), and one message larger than werift's
        // receive window (about 1 MiB), which can never be reassembled. Browsers cap messages
        // at the answer's a=max-message-size (64 KiB), so only such a client can do this.
        const stalls = input.messages.includes("") ||
          input.messages.some((m) => new TextEncoder().encode(m).length > 1_040_000);
        const alive = await probe(live.caller, bytes);
        tally.outcome(
          alive
            ? "ok: call still answering"
            : hangsUp
            ? "call ended (disconnect-bot)"
            : stalls
            ? "channel stalled in werift (empty message, or one over ~1 MiB)"
            : "call lost",
        );
        if (!alive && !hangsUp && !stalls) {
          tally.fail(
            "the call stopped answering",
            `${input.note}: ${input.messages.map((m) => m.slice(0, 60)).join(" | ")}`,
          );
        }
        for (const b of live.big.splice(0)) tally.fail("page message over 64 KiB", b);
        for (const b of live.bad.splice(0)) tally.fail("page message not JSON", b);
        judgeWorker(stack, tally, seen);
        if (stack.health().exited) {
          tally.fail("crash", `the worker died on: ${input.note}`);
          return tally;
        }
        if (!alive) {
          await live.caller.hangUp();
          live = undefined;
        }
      }
      for (const e of takeEscapes()) tally.fail(e.kind, `fuzzer process: ${e.detail}`);
    }
    tally.figure("calls placed", calls);
    tally.memory.push({
      process: "worker",
      beforeBytes: rssBefore,
      afterBytes: await stack.workerRss(),
    });
  } finally {
    await live?.caller.hangUp();
    if (!options.stack) await stack.close();
    tally.finish();
  }
  return tally;
}
