// Runs a scenario (caller/scenario.ts) as one call through the real service: dials as a page
// does, then takes the steps in order and stops at the first unmet expectation. Each step comes
// out as a case for the JUnit report; the conversation comes out as lines.
//
// Where an expectation looks: a reply, an action or the end counts from the last thing the
// caller did (said, typed or interrupted), so a reply that came while a `wait` ran still counts;
// a second expect_reply looks past what the first one matched. expect_reply waits, by default,
// until the bot has finished speaking (caller/scenario_reply.ts). The conversation printed is
// what the caller heard, unit by unit (caller/bot_speech.ts), and each act the caller makes
// prints the time from its end to the bot's first audio, as the caller hears it, with a p50/p99
// summary at the end. A config change is not sent to
// pages, so expect_config reads the session's log through sessions.get with the same key (an
// sk_ key; the log is written in batches of about half a second).
import type { RtviMessage } from "./caller.ts";
import { dial, type DialOptions } from "./dial.ts";
import { errorText, type Failure } from "./call_events.ts";
import { formatEvent } from "./call_events.ts";
import { isFinal, isRtvi, type Stop, Watch } from "./message_watch.ts";
import { BotSpeech } from "./bot_speech.ts";
import { ReplyWatch } from "./scenario_reply.ts";
import { summarise } from "./turn_latency.ts";
import { contains, describeStep, type Scenario, type Step, type Utterance } from "./scenario.ts";
import type { SpokenTurn } from "./script.ts";
import { readCallEnded } from "../proto/rtvi.ts";
import { isEvent, type LoggedEvent } from "../common/session_events.ts";
import { wordErrorRate } from "../media/stt/wer.ts";

export interface ScenarioOptions extends DialOptions {
  scenario: Scenario;
  /** The audio of every `say`/`wav` (also inside interrupts), by speechKey(). */
  speech: Map<string, SpokenTurn>;
  /** Default limit of an expectation and of bot-ready (ms). */
  timeoutMs: number;
  onLine?: (line: string) => void;
}

export interface StepResult {
  name: string;
  ms: number;
  status: "passed" | "failed" | "skipped";
  failure?: string;
}

export interface ScenarioResult {
  name: string;
  session_id: string | null;
  /** 0 every step passed; 1 an expectation was not met; 2 the call could not be set up. */
  exit_code: 0 | 1 | 2 | 130;
  failure: Failure | null;
  steps: StepResult[];
  /**
   * Per caller act (say, wav, type, interrupt), in order: the end of its speech (or the typed
   * text being sent) to the bot's first audio at the caller, ms; null when no audio came.
   */
  latency: { step: number; ms: number | null }[];
}

/** The key of an utterance's audio in ScenarioOptions.speech. */
export const speechKey = (u: Utterance): string =>
  "say" in u ? `say:${u.say}` : "wav" in u ? `wav:${u.wav}` : `type:${u.type}`;

/** The utterances of a scenario that need audio. */
export function spokenUtterances(s: Scenario): Utterance[] {
  const out: Utterance[] = [];
  for (const step of s.steps) {
    if (step.kind === "say") out.push({ say: step.text });
    if (step.kind === "wav") out.push({ wav: step.path });
    if (step.kind === "interrupt" && !("type" in step.what)) out.push(step.what);
  }
  return out;
}

class Unmet extends Error {
  constructor(readonly failure: Failure, readonly exitCode: 1 | 130 = 1) {
    super(failure.message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runScenario(o: ScenarioOptions): Promise<ScenarioResult> {
  const line = o.onLine ?? (() => {});
  const s = o.scenario;
  const result: ScenarioResult = {
    name: s.name,
    session_id: null,
    exit_code: 0,
    failure: null,
    steps: s.steps.map((step) => ({ name: describeStep(step), ms: 0, status: "skipped" })),
    latency: [],
  };
  const dialled = await dial(
    { ...o, config: s.config ?? o.config, init: s.init ?? o.init },
    (id) => {
      result.session_id = id;
      line(`session: ${id}`);
    },
  );
  if (dialled.kind === "failed") {
    line(`FAILED (${dialled.failure.kind}): ${dialled.failure.message}`);
    return { ...result, exit_code: dialled.exitCode, failure: dialled.failure };
  }
  const caller = dialled.caller;
  const speech = new BotSpeech();
  const watch: Watch = new Watch(caller, o.signal, (m) => {
    const d = m.data as Record<string, unknown> | undefined;
    const change = speech.add(watch.seen.length - 1, m);
    if (isFinal(m)) line(`heard as: ${String(d?.text ?? "") || "(nothing)"}`);
    else if (change?.kind === "done") {
      // Printed once played: what the caller heard of it, never a unit dropped unheard.
      const u = change.unit;
      line(formatEvent({ type: "bot", text: u.text, cut_off: u.cutOff, heard: u.heard, t_ms: 0 }));
    } else if (isRtvi("server-message")(m)) {
      const end = readCallEnded(m.data);
      line(
        end ? `bot hung up (${end.status}: ${end.reason})` : `actions: ${JSON.stringify(m.data)}`,
      );
    }
  });
  const fail = (stop: Stop, step: string): Unmet => {
    switch (stop.kind) {
      case "error":
        return new Unmet({
          kind: "protocol error",
          message: `RTVI ${stop.msg.type} during ${step}: ${errorText(stop.msg)}`,
        });
      case "hangup":
        return new Unmet({ kind: "hung up early", message: `the bot hung up during ${step}` });
      case "aborted":
        return new Unmet({ kind: "interrupted", message: "interrupted" }, 130);
      case "timeout":
        return new Unmet({ kind: "timeout", message: `timed out during ${step}` });
    }
  };

  // Where expectations look from: the caller's last act (its first message index, its end).
  let actedAt = { index: 0, at: performance.now() };
  const replies = new ReplyWatch(watch, speech, caller, o.timeoutMs);
  const latencies: Promise<void>[] = [];
  let summarised = false;
  /** Prints (and keeps) the wait from `end` (the caller's act over) to the bot's first audio. */
  const measure = (step: number, end: number, from: string) => {
    const entry: { step: number; ms: number | null } = { step, ms: null };
    result.latency.push(entry);
    latencies.push(
      caller.audioAfter(end, o.timeoutMs).then((at) => {
        if (summarised) return; // the run is over: its report is out
        entry.ms = at === null ? null : Math.round(at - end);
        line(
          `latency (step ${step}, from ${from}): first bot audio ${
            entry.ms === null ? "-" : `${entry.ms} ms`
          }`,
        );
      }),
    );
  };
  /** The p50/p99 line, once the figures still on their way have come (briefly). */
  const summary = async () => {
    await Promise.race([Promise.all(latencies), sleep(1000)]);
    summarised = true;
    if (result.latency.length === 0) return;
    const s = summarise(result.latency.map((l) => l.ms));
    line(formatEvent({ type: "summary", summary: s, t_ms: 0 }));
  };
  const configsSeen = new Set<number>();

  const speak = async (u: Utterance, name: string) => {
    if ("type" in u) {
      line(`caller (typed): ${u.type}`);
      caller.sendRtvi("send-text", { content: u.type, options: {} });
      measure(current + 1, performance.now(), "the text sent");
      return;
    }
    const turn = o.speech.get(speechKey(u));
    if (!turn) throw new Error(`no audio prepared for ${name}`);
    line(`caller: ${turn.label}`);
    const from = watch.seen.length;
    const said = await Promise.race([caller.say(turn.pcm), watch.terminal.then(() => null)]);
    if (!said) throw fail((await watch.next(from, () => false, 0)) as Stop, name);
    const speechEnd = caller.frames.speechEnd(said.startedAt) ?? said.endedAt;
    measure(current + 1, speechEnd, "the end of speech");
    if (turn.text !== undefined) {
      // What the service heard of it, when it comes: printed, never judged here.
      void watch.next(from, isFinal, performance.now() + o.timeoutMs).then((h) => {
        if (h.kind !== "match") return;
        const heard = String((h.msg.data as { text?: string })?.text ?? "");
        line(
          `said vs heard: "${turn.text}" / "${heard}": WER ${
            wordErrorRate(turn.text!, heard).toFixed(2)
          }`,
        );
      });
    }
  };

  const act = async (step: Step & { kind: "say" | "wav" | "type" | "interrupt" }, name: string) => {
    if (step.kind === "interrupt") {
      // Over the bot: `afterMs` after the first bot audio since the caller's last act.
      const first = await caller.audioAfter(actedAt.at, o.timeoutMs);
      if (first === null) {
        throw new Unmet({ kind: "timeout", message: `${name}: the bot did not start speaking` });
      }
      const wait = first + step.afterMs - performance.now();
      if (wait > 0) await sleep(wait);
    } else {
      // A person lets the bot finish before talking; an interrupt is the way to talk over it.
      const quiet = await replies.finished();
      if (quiet.kind === "unmet") {
        throw new Unmet({
          kind: "timeout",
          message: `${name}: ${quiet.message} (an interrupt step talks over the bot)`,
        });
      }
      if (quiet.kind !== "met") throw fail(quiet, name);
    }
    const from = watch.seen.length;
    const what: Utterance = step.kind === "say"
      ? { say: step.text }
      : step.kind === "wav"
      ? { wav: step.path }
      : step.kind === "type"
      ? { type: step.text }
      : step.what;
    await speak(what, name);
    // Expectations read the messages from the start of the act; an interrupt waits for bot
    // audio after its end (not the tail of an earlier reply heard while the caller spoke).
    actedAt = { index: from, at: performance.now() };
    replies.from = from;
  };

  const expectReply = async (step: Step & { kind: "expect_reply" }, name: string) => {
    const r = await replies.expect(step, performance.now() + (step.withinMs ?? o.timeoutMs));
    if (r.kind === "unmet") throw new Unmet({ kind: "timeout", message: `${name}: ${r.message}` });
    if (r.kind !== "met") throw fail(r, name);
  };

  const expectAction = async (step: Step & { kind: "expect_action" }, name: string) => {
    const deadline = performance.now() + (step.withinMs ?? o.timeoutMs);
    const match = (m: RtviMessage) => {
      if (!isRtvi("server-message")(m) || readCallEnded(m.data)) return false;
      const d = m.data as { type?: unknown; data?: unknown };
      return d?.type === step.type && (step.data === undefined || contains(d.data, step.data));
    };
    const hit = await watch.next(actedAt.index, match, deadline);
    if (hit.kind === "timeout") throw new Unmet({ kind: "timeout", message: `${name}: none came` });
    if (hit.kind !== "match") throw fail(hit, name);
  };

  const expectConfig = async (step: Step & { kind: "expect_config" }, name: string) => {
    const deadline = performance.now() + (step.withinMs ?? o.timeoutMs);
    let last: unknown[] = [];
    for (;;) {
      const log = await sessionLog(o, result.session_id!);
      const configs = log.map((e, i) => ({ e, i }))
        .filter(({ e }) => isEvent(e, "from_brain", "config"));
      last = configs.map(({ e }) => e.data);
      const hit = configs.find(({ e, i }) => !configsSeen.has(i) && contains(e.data, step.config));
      if (hit) return void configsSeen.add(hit.i);
      if (performance.now() > deadline) {
        throw new Unmet({
          kind: "timeout",
          message: `${name}: the brain sent ${
            last.length ? `only ${JSON.stringify(last)}` : "no config"
          }`,
        });
      }
      await sleep(250);
    }
  };

  const expectEnd = async (step: Step & { kind: "expect_end" }, name: string) => {
    const deadline = performance.now() + (step.withinMs ?? o.timeoutMs);
    const notice = (m: RtviMessage) => isRtvi("server-message")(m) && !!readCallEnded(m.data);
    // The notice comes just before the hang-up; a hang-up without one is an end of no reason.
    const i = watch.seen.findIndex((e, k) => k >= actedAt.index && notice(e.msg));
    let end = i >= 0 ? readCallEnded(watch.seen[i].msg.data) : undefined;
    if (!end) {
      const hit = await watch.next(actedAt.index, notice, deadline);
      if (hit.kind === "timeout") {
        throw new Unmet({ kind: "timeout", message: `${name}: the call went on` });
      }
      if (hit.kind === "match") end = readCallEnded(hit.msg.data);
      else if (hit.kind !== "hangup") throw fail(hit, name);
    }
    const got = end ? `${end.status}: ${end.reason}` : "a hang-up without a reason";
    if (
      (step.status && end?.status !== step.status) ||
      (step.reason && !step.reason.test(end?.reason ?? ""))
    ) {
      throw new Unmet({ kind: "hung up early", message: `${name}: the call ended (${got})` });
    }
  };

  let current = 0;
  let stepStarted = performance.now();
  try {
    try {
      await caller.waitOpen(o.timeoutMs);
      caller.sendClientReady();
    } catch {
      const failure: Failure = { kind: "no bot-ready", message: "the data channel did not open" };
      line(`FAILED (${failure.kind}): ${failure.message}`);
      return { ...result, exit_code: 2, failure };
    }
    const ready = await watch.next(0, isRtvi("bot-ready"), performance.now() + o.timeoutMs);
    if (ready.kind !== "match") {
      const failure: Failure = { kind: "no bot-ready", message: "no bot-ready after client-ready" };
      line(`FAILED (${failure.kind}): ${failure.message}`);
      return { ...result, exit_code: 2, failure };
    }
    caller.openMicrophone();
    actedAt = { index: 0, at: ready.at };
    for (; current < s.steps.length; current++) {
      const step = s.steps[current];
      const r = result.steps[current];
      const t = stepStarted = performance.now();
      line(`step ${current + 1}: ${r.name}`);
      if (step.kind === "wait") await sleep(step.ms);
      else if (step.kind === "expect_reply") await expectReply(step, r.name);
      else if (step.kind === "expect_action") await expectAction(step, r.name);
      else if (step.kind === "expect_config") await expectConfig(step, r.name);
      else if (step.kind === "expect_end") await expectEnd(step, r.name);
      else await act(step, r.name);
      r.ms = Math.round(performance.now() - t);
      r.status = "passed";
    }
    await summary();
    line(`passed: ${s.steps.length} step${s.steps.length === 1 ? "" : "s"}`);
    return result;
  } catch (err) {
    const unmet = err instanceof Unmet
      ? err
      : new Unmet({ kind: "protocol error", message: (err as Error).message });
    const r = result.steps[current];
    if (r) {
      r.status = "failed";
      r.failure = unmet.failure.message;
      r.ms = Math.round(performance.now() - stepStarted);
    }
    await summary();
    line(`FAILED (${unmet.failure.kind}) at step ${current + 1}: ${unmet.failure.message}`);
    return { ...result, exit_code: unmet.exitCode, failure: unmet.failure };
  } finally {
    await caller.hangUp();
  }
}

/** The session's log through sessions.get with the scenario's key. */
async function sessionLog(
  o: DialOptions,
  sessionId: string,
): Promise<LoggedEvent<string>[]> {
  const res = await fetch(`${o.api.replace(/\/+$/, "")}/api/v1/sessions.get`, {
    method: "POST",
    headers: { authorization: `Bearer ${o.key}`, "content-type": "application/json" },
    body: JSON.stringify({ session_id: sessionId }),
  });
  const body = await res.json().catch(() => null);
  if (res.status !== 200) {
    throw new Unmet({
      kind: "protocol error",
      message:
        `expect_config reads the session log with sessions.get, which answered HTTP ${res.status} ${
          JSON.stringify(body?.error ?? body)
        } (use an sk_ key)`,
    });
  }
  return body.log ?? [];
}
