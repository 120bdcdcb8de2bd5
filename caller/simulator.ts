// The caller simulator: dials a session through the real service exactly as a page does
// (sessions.connect, then the offer to the returned worker endpoint), says a script of turns as
// audio, and checks that the brain behind the agent greets, answers every turn and keeps to the
// protocol. Every step has a time limit; the conversation and per-turn latencies measured at the
// caller come out as events.
//
// Outcome (exit codes of `deno task call`):
//   0  the greeting and every turn passed.
//   1  the call was set up but the conversation failed: no greeting, a step timed out, an RTVI
//      `error`/`error-response` arrived, or the bot hung up while script turns remained.
//   2  the call could not be set up: bad input, the API unreachable, sessions.connect or the
//      offer refused, no bot-ready.
// The bot hanging up after its reply to the last turn has begun is a normal end, not a failure.
import type { RtviMessage, TestCaller } from "./caller.ts";
import { dial } from "./dial.ts";
import { impairedLink, type Impairment } from "./lossy_link.ts";
import { speechEndSample, type SpokenTurn } from "./script.ts";
import { wordErrorRate } from "../media/stt/wer.ts";
import { summarise } from "./turn_latency.ts";
import { CLIENT_LATENCY_T, readCallEnded } from "../proto/rtvi.ts";
import {
  type CallEvent,
  errorText,
  type Failure,
  type FailureKind,
  type SimulationResult,
  type TurnReport,
} from "./call_events.ts";
import { isBotEvent, isFinal, isRtvi, type Stop, Watch } from "./message_watch.ts";

// The report's vocabulary, for callers of simulateCall.
export { formatEvent } from "./call_events.ts";
export type {
  CallEvent,
  Failure,
  FailureKind,
  Latency,
  SimulationResult,
  TurnReport,
} from "./call_events.ts";

export interface SimulationOptions {
  /** API base URL, e.g. http://127.0.0.1:8787. */
  api: string;
  /** sk_ or pk_ key. */
  key: string;
  agent: string;
  /** Sent as the Origin header (a pk_ key's allowlist decides on it). */
  origin?: string;
  /** The connect body's `config` and `init`. */
  config?: Record<string, unknown>;
  init?: Record<string, unknown>;
  /** The connect body's `display_name` label. */
  displayName?: string;
  turns: SpokenTurn[];
  /** Limit of each step (bot-ready, greeting, transcript, reply start, reply end). */
  timeoutMs: number;
  /**
   * How long the bot must stay quiet after bot-stopped-speaking for its reply to count as done
   * (a brain may pause between units); also the caller's pause before speaking. Default 600.
   */
  settleMs?: number;
  /** A received 20 ms frame louder than this (RMS) is bot audio. Default 300. */
  audioLevel?: number;
  /**
   * Tell the worker each turn's figure (RTVI client-message "client-latency"), as the demo page
   * does, so the session record shows it beside the worker's own. Default true.
   */
  reportLatency?: boolean;
  onEvent?: (e: CallEvent) => void;
  /**
   * Fail the call when a text turn's recognised text differs from what was said by more than
   * this word error rate (0 to 1). Undefined: the WER is printed, never judged.
   */
  expectHeard?: number;
  /** Aborting hangs up and ends with exit code 130. */
  signal?: AbortSignal;
  /**
   * Loss and jitter on the caller's own sockets from its first packet (caller/lossy_link.ts),
   * seeded, so an impaired call repeats.
   */
  impairment?: Impairment;
  /**
   * Runs on the live call once every turn has passed, before the caller hangs up (a bench's own
   * steps on the same impaired call, e.g. a barge-in); a throw fails the call.
   */
  afterTurns?: (caller: TestCaller) => Promise<void>;
}

/** A step failed. */
class StepFailed extends Error {
  constructor(
    readonly failure: Failure,
    readonly exitCode: 1 | 130 = 1,
    /** A fatal RTVI error stopped the step: the call-ended notice that follows says why. */
    readonly fatal?: { step: string; text: string },
  ) {
    super(failure.message);
  }
}

/** How long a fatal error's call-ended notice is waited for (the worker sends it right after). */
const NOTICE_WAIT_MS = 2000;

type EventBody = CallEvent extends infer E ? E extends unknown ? Omit<E, "t_ms"> : never : never;

interface BotOutputData {
  text?: string;
  segment_id?: number;
  spoken_status?: string;
  spoken_progress?: { accumulated_text?: string; remaining_text?: string };
}

/** Runs one simulated call; never throws for anything the service or brain does. */
export async function simulateCall(o: SimulationOptions): Promise<SimulationResult> {
  const t0 = performance.now();
  const settleMs = o.settleMs ?? 600;
  const level = o.audioLevel ?? 300;
  const result: SimulationResult = {
    exit_code: 0,
    session_id: null,
    failure: null,
    greeting: null,
    turns: [],
    summary: summarise([]),
    events: [],
  };
  const emit = (e: EventBody) => {
    const event = { t_ms: Math.round(performance.now() - t0), ...e } as CallEvent;
    result.events.push(event);
    o.onEvent?.(event);
  };
  const finish = (failure: Failure | null, code: SimulationResult["exit_code"]) => {
    result.failure = failure;
    result.exit_code = code;
    result.summary = summarise(result.turns.map((t) => t.latency.bot_audio));
    if (result.turns.length) emit({ type: "summary", summary: result.summary });
    if (failure) emit({ type: "failure", failure });
    emit({ type: "done", exit_code: code, turns: result.turns.length });
    return result;
  };

  const link = o.impairment ? impairedLink(o.impairment) : undefined;
  const dialled = await dial({ ...o, onSockets: link && ((pc) => link.attach(pc)) }, (id) => {
    result.session_id = id;
    emit({ type: "session", session_id: id });
  });
  if (dialled.kind === "failed") return finish(dialled.failure, dialled.exitCode);
  const caller = dialled.caller;

  // Units announced ("new") but not yet completed, printed when they complete or at step end.
  const pending = new Map<string, string>();
  let current: { heard: string[]; bot: string[] } | null = null;
  let hungUpByUs = false, hangupShown = false;
  let ended: { status: string; reason: string } | undefined;
  const botHungUp = () => {
    if (hungUpByUs || hangupShown) return;
    hangupShown = true;
    emit({ type: "hangup", ...ended });
  };
  const printBot = (text: string, heard: string | null, cutOff: boolean) => {
    current?.bot.push(text);
    emit({ type: "bot", text, cut_off: cutOff, heard });
  };
  const flushPending = () => {
    for (const text of pending.values()) printBot(text, null, false);
    pending.clear();
  };
  const onMessage = (m: RtviMessage) => {
    const data = m.data as Record<string, unknown> | undefined;
    if (m.type === "signalling" && (m.message as { type?: string })?.type === "peerLeft") {
      return botHungUp();
    }
    if (m.label !== "rtvi-ai") return;
    if (isFinal(m)) {
      const text = String(data?.text ?? "");
      current?.heard.push(text);
      emit({ type: "heard", text });
    } else if (m.type === "bot-output") {
      const d = (data ?? {}) as BotOutputData;
      const text = String(d.text ?? "");
      const key = d.segment_id !== undefined ? `#${d.segment_id}` : text;
      if (d.spoken_status === "new" || d.spoken_status === "in-progress") {
        if (!pending.has(key)) pending.set(key, text);
        return;
      }
      pending.delete(key);
      const remaining = d.spoken_progress?.remaining_text ?? "";
      const heard = d.spoken_progress?.accumulated_text ?? null;
      printBot(text, heard, d.spoken_status === "completed" && remaining.trim() !== "");
    } else if (m.type === "server-message") {
      const notice = readCallEnded(m.data);
      if (notice) ended = notice;
      else emit({ type: "action", data: m.data });
    } else if (m.type === "error" || m.type === "error-response") {
      emit({ type: "error", message: m });
    }
  };
  const watch = new Watch(caller, o.signal, onMessage);
  caller.chat.stateChanged.subscribe((s) => {
    if (s === "closed") botHungUp();
  });
  const firstAudio = (since: number) =>
    caller.heardFrames.find((f) => f.at >= since && f.rms > level)?.at ?? null;
  const ms = (from: number, to: number | null) => to === null ? null : Math.round(to - from);

  const failureOf = (stop: Stop, step: string): StepFailed => {
    switch (stop.kind) {
      case "error": {
        const text = errorText(stop.msg);
        const fatal = (stop.msg.data as { fatal?: unknown } | undefined)?.fatal === true;
        return new StepFailed(
          { kind: "protocol error", message: `RTVI ${stop.msg.type} during ${step}: ${text}` },
          1,
          fatal ? { step, text } : undefined,
        );
      }
      case "hangup":
        return new StepFailed({ kind: "hung up early", message: `the bot hung up during ${step}` });
      case "aborted":
        return new StepFailed({ kind: "interrupted", message: "interrupted" }, 130);
      case "timeout":
        return new StepFailed({ kind: "timeout", message: `timed out during ${step}` });
    }
  };

  /**
   * A fatal error is the service failing the call, not the brain breaking the protocol: named by
   * the session's end reason from the call-ended notice that follows it (brain_unreachable, ...).
   */
  const failedCall = async (err: StepFailed): Promise<Failure | undefined> => {
    if (!err.fatal) return undefined;
    const until = performance.now() + NOTICE_WAIT_MS;
    while (!ended && performance.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (ended?.status !== "failed") return undefined;
    return {
      kind: "call failed",
      code: ended.reason,
      message: `the service failed the call during ${err.fatal.step} (${ended.reason}): ` +
        err.fatal.text,
    };
  };

  /**
   * Waits for the bot's reply from message index `from`: it starts (bot-output or
   * bot-started-speaking) within the timeout, ends with bot-stopped-speaking followed by
   * `settleMs` of quiet (or the bot hanging up), with no more than the timeout between bot
   * events, and is heard.
   */
  const awaitReply = async (
    from: number,
    since: number,
    step: string,
    noStart: FailureKind,
    what: string,
    after: string,
  ): Promise<{ firstOutput: number | null; firstAudio: number; hungUp: boolean }> => {
    let firstOutput: number | null = null;
    let hungUp = false;
    const first = await watch.next(from, isBotEvent, performance.now() + o.timeoutMs);
    if (first.kind === "timeout") {
      throw new StepFailed({
        kind: noStart,
        message: `no ${what} from the bot within ${o.timeoutMs / 1000} s of ${after}`,
      });
    }
    if (first.kind !== "match") throw failureOf(first, step);
    if (first.msg.type === "bot-output") firstOutput = first.at;
    let stopped = first.msg.type === "bot-stopped-speaking";
    let index = first.index;
    for (;;) {
      const wait = stopped ? settleMs : o.timeoutMs;
      const hit = await watch.next(index + 1, isBotEvent, performance.now() + wait);
      if (hit.kind === "timeout") {
        if (stopped) break;
        throw new StepFailed({
          kind: "timeout",
          message: `the bot did not stop speaking (${step}): no bot event for ${
            o.timeoutMs / 1000
          } s`,
        });
      }
      if (hit.kind === "hangup") {
        hungUp = true;
        break;
      }
      if (hit.kind !== "match") throw failureOf(hit, step);
      index = hit.index;
      if (hit.msg.type === "bot-output") firstOutput ??= hit.at;
      if (hit.msg.type === "bot-stopped-speaking") stopped = true;
      if (hit.msg.type === "bot-started-speaking") stopped = false;
    }
    flushPending();
    // Audio and data travel separately: give the last frames a moment to land.
    let audio = firstAudio(since);
    for (let i = 0; audio === null && i < 10; i++) {
      await new Promise((r) => setTimeout(r, 100));
      audio = firstAudio(since);
    }
    if (audio === null) {
      throw new StepFailed({
        kind: noStart,
        message: `the bot's reply (${step}) was not heard: no audio louder than RMS ${level}`,
      });
    }
    return { firstOutput, firstAudio: audio, hungUp };
  };

  let step = 0;
  let reportedAt = -Infinity;
  try {
    // bot-ready
    try {
      await caller.waitOpen(o.timeoutMs);
    } catch {
      return finish({
        kind: "no bot-ready",
        message: `the data channel did not open within ${o.timeoutMs / 1000} s`,
      }, 2);
    }
    const askedAt = performance.now();
    caller.sendClientReady();
    const ready = await watch.next(0, isRtvi("bot-ready"), askedAt + o.timeoutMs);
    if (ready.kind === "timeout") {
      return finish({
        kind: "no bot-ready",
        message: `no bot-ready within ${o.timeoutMs / 1000} s of client-ready`,
      }, 2);
    }
    if (ready.kind !== "match") throw failureOf(ready, "connect");
    const readyAt = ready.at;
    emit({ type: "ready", after_ms: Math.round(readyAt - askedAt) });
    caller.openMicrophone();

    // The greeting.
    current = { heard: [], bot: [] };
    // From the first message: a service may start the greeting before its bot-ready.
    const g = await awaitReply(
      0,
      readyAt,
      "the greeting",
      "no greeting",
      "greeting",
      "bot-ready",
    );
    const gLatency = {
      bot_output: ms(readyAt, g.firstOutput),
      bot_audio: ms(readyAt, g.firstAudio),
    };
    result.greeting = { bot: current.bot, latency: gLatency };
    emit({ type: "latency", step: "greeting", latency: gLatency });
    const hungUpEarly = (after: string, left: number) =>
      new StepFailed({
        kind: "hung up early",
        message: `the bot hung up after ${after} with ${left} script turn${
          left === 1 ? "" : "s"
        } left`,
      });
    if (g.hungUp && o.turns.length > 0) throw hungUpEarly("the greeting", o.turns.length);

    for (const turn of o.turns) {
      step++;
      const from = watch.seen.length;
      current = { heard: [], bot: [] };
      const report: TurnReport = {
        said: turn.label,
        heard: current.heard,
        bot: current.bot,
        latency: { transcript: null, bot_output: null, bot_audio: null },
      };
      result.turns.push(report);
      emit({ type: "caller", text: turn.label });
      let speechEnd: number;
      if (turn.typed) {
        // As the page's text box sends it (client-js sendText); the service echoes it as the
        // final user-transcription, and the figures count from the moment it was sent.
        caller.sendRtvi("send-text", { content: turn.text, options: {} });
        speechEnd = performance.now();
      } else {
        const said = await Promise.race([caller.say(turn.pcm), watch.terminal.then(() => null)]);
        if (!said) {
          const stop = await watch.next(from, () => false, 0);
          throw failureOf(stop.kind === "match" ? { kind: "timeout" } : stop, `turn ${step}`);
        }
        // The end of the caller's words as the simulator knows them (the source's speech, before
        // any noise), at the time the frame that carried it really went out.
        const endSample = turn.speechEnd ?? speechEndSample(turn.pcm);
        speechEnd = caller.frames.sampleSentAt(said.startedAt, endSample) ??
          said.startedAt + (endSample * 1000) / 48000;
      }
      const final = await watch.next(from, isFinal, speechEnd + o.timeoutMs);
      if (final.kind === "timeout") {
        throw new StepFailed({
          kind: "timeout",
          message: `turn ${step}: no final user-transcription within ${
            o.timeoutMs / 1000
          } s of the end of the caller's speech (the service heard nothing?)`,
        });
      }
      if (final.kind !== "match") throw failureOf(final, `turn ${step}`);
      report.latency.transcript = ms(speechEnd, final.at);
      const r = await awaitReply(
        final.index + 1,
        speechEnd,
        `turn ${step}`,
        "timeout",
        "reply",
        `the final transcript (turn ${step})`,
      );
      report.latency.bot_output = ms(speechEnd, r.firstOutput);
      report.latency.bot_audio = ms(speechEnd, r.firstAudio);
      emit({ type: "latency", step, latency: report.latency });
      if (turn.text !== undefined && !turn.typed) {
        const heard = report.heard.join(" ");
        report.wer = wordErrorRate(turn.text, heard);
        emit({ type: "wer", step, said: turn.text, heard, wer: report.wer });
        if (o.expectHeard !== undefined && report.wer > o.expectHeard) {
          throw new StepFailed({
            kind: "misheard",
            message: `turn ${step}: said "${turn.text}", heard "${heard}": WER ${
              report.wer.toFixed(2)
            } is over ${o.expectHeard}`,
          });
        }
      }
      if (o.reportLatency !== false && report.latency.bot_audio !== null && !r.hungUp) {
        try {
          caller.sendRtvi("client-message", {
            t: CLIENT_LATENCY_T,
            d: { end_of_speech_to_audio_ms: report.latency.bot_audio },
          });
          reportedAt = performance.now();
        } catch { /* the channel closed: the figure is still printed */ }
      }
      if (r.hungUp && step < o.turns.length) {
        throw hungUpEarly(`turn ${step}`, o.turns.length - step);
      }
      if (r.hungUp) break;
    }
    if (o.afterTurns) {
      try {
        await o.afterTurns(caller);
      } catch (err) {
        throw new StepFailed({
          kind: "timeout",
          message: `after the turns: ${(err as Error).message}`,
        });
      }
    }
    return finish(null, 0);
  } catch (err) {
    if (!(err instanceof StepFailed)) throw err;
    flushPending();
    return finish(await failedCall(err) ?? err.failure, err.exitCode);
  } finally {
    hungUpByUs = true;
    // A figure reported just now must leave before the channel closes.
    const wait = reportedAt + 200 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await caller.hangUp();
  }
}
