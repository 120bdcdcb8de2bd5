// What the caller simulator reports (caller/simulator.ts): the conversation as events with the
// latencies measured at the caller, the failure that ended it, and one readable line per event
// for `deno task call`.
import type { RtviMessage } from "./caller.ts";
import type { LatencySummary } from "./turn_latency.ts";

export type FailureKind =
  | "usage"
  | "unreachable"
  | "connect refused"
  | "offer refused"
  | "no bot-ready"
  | "no greeting"
  | "timeout"
  | "protocol error"
  /** The service failed the call (its call-ended notice: failed, with the reason as `code`). */
  | "call failed"
  | "hung up early"
  | "misheard"
  | "interrupted";

export interface Failure {
  kind: FailureKind;
  message: string;
  /**
   * The service's error envelope code when it refused (connect refused, offer refused), or the
   * session's end reason when it failed the call (call failed).
   */
  code?: string;
}

/** Latencies in ms, measured at the caller; null when the thing never happened. */
export interface Latency {
  /** End of the caller's speech → the final user-transcription (turns only). */
  transcript?: number | null;
  /** End of the caller's speech (turns) or bot-ready (greeting) → the first bot-output. */
  bot_output: number | null;
  /**
   * Same start → the first received bot audio frame louder than the audio level. For turns the
   * start is the last voiced sample the caller sent (caller/turn_latency.ts): this is the wait
   * the caller hears, reported to the worker as the turn's `heard_at_caller`.
   */
  bot_audio: number | null;
}

/** One line of the conversation; `t_ms` is ms since the simulation started. */
export type CallEvent =
  & { t_ms: number }
  & (
    | { type: "session"; session_id: string }
    | { type: "ready"; after_ms: number }
    | { type: "caller"; text: string }
    | { type: "heard"; text: string }
    | { type: "bot"; text: string; cut_off: boolean; heard: string | null }
    | { type: "action"; data: unknown }
    | { type: "latency"; step: "greeting" | number; latency: Latency }
    /** A text turn: what the caller said against what the service heard, word error rate. */
    | { type: "wer"; step: number; said: string; heard: string; wer: number }
    | { type: "error"; message: RtviMessage }
    /** The worker's call-ended notice, when it sent one, says why. */
    | { type: "hangup"; status?: string; reason?: string }
    | { type: "failure"; failure: Failure }
    | { type: "summary"; summary: LatencySummary }
    | { type: "done"; exit_code: number; turns: number }
  );

export interface TurnReport {
  said: string;
  /** Final transcripts the service sent during the turn. */
  heard: string[];
  /** Bot units as spoken (their full text). */
  bot: string[];
  latency: Latency;
  /** Text turns: word error rate of what was heard against what was said. */
  wer?: number;
}

export interface SimulationResult {
  exit_code: 0 | 1 | 2 | 130;
  session_id: string | null;
  failure: Failure | null;
  greeting: { bot: string[]; latency: Latency } | null;
  turns: TurnReport[];
  /** End of speech to first bot audio over the turns (p50/p99, first turn vs later ones). */
  summary: LatencySummary;
  events: CallEvent[];
}

/** One readable line per event. */
export function formatEvent(e: CallEvent): string {
  switch (e.type) {
    case "session":
      return `session: ${e.session_id}`;
    case "ready":
      return `connected: bot-ready ${e.after_ms} ms after client-ready`;
    case "caller":
      return `caller: ${e.text}`;
    case "heard":
      return `heard as: ${e.text === "" ? "(nothing)" : e.text}`;
    case "bot":
      return e.cut_off ? `bot: ${e.text}  [cut off; heard: "${e.heard ?? ""}"]` : `bot: ${e.text}`;
    case "action":
      return `actions: ${JSON.stringify(e.data)}`;
    case "latency": {
      const l = e.latency;
      const f = (v: number | null | undefined) => v === null || v === undefined ? "-" : `${v} ms`;
      return e.step === "greeting"
        ? `latency (greeting, from bot-ready): first bot-output ${
          f(l.bot_output)
        }, first bot audio ${f(l.bot_audio)}`
        : `latency (turn ${e.step}, from end of speech): transcript ${
          f(l.transcript)
        }, first bot-output ${f(l.bot_output)}, first bot audio ${f(l.bot_audio)}`;
    }
    case "wer":
      return `said vs heard (turn ${e.step}): "${e.said}" / "${e.heard}": WER ${e.wer.toFixed(2)}`;
    case "error": {
      const fatal = (e.message.data as { fatal?: unknown } | undefined)?.fatal === true;
      return `error${fatal ? " (fatal)" : ""}: ${errorText(e.message)}`;
    }
    case "hangup":
      return e.reason ? `bot hung up (${e.status}: ${e.reason})` : "bot hung up";
    case "summary": {
      const s = e.summary;
      const f = (v: number | null) => v === null ? "-" : `${Math.round(v)} ms`;
      return `end of speech → first bot audio at the caller: p50 ${f(s.p50)}, p99 ${
        f(s.p99)
      } over ${s.n} turn${s.n === 1 ? "" : "s"}${
        s.missing ? ` (${s.missing} unmeasured)` : ""
      }; first turn ${f(s.first)}, later turns p50 ${f(s.later_p50)}`;
    }
    case "failure":
      return `FAILED (${e.failure.kind}): ${e.failure.message}`;
    case "done":
      return e.exit_code === 0
        ? `passed: greeting and ${e.turns} turn${e.turns === 1 ? "" : "s"}`
        : `exit ${e.exit_code}`;
  }
}

/** An RTVI error's text: `data.error` (RTVI 2), `data.message` (older), else the JSON. */
export function errorText(m: RtviMessage): string {
  const d = m.data as { error?: unknown; message?: unknown } | undefined;
  if (typeof d?.error === "string") return d.error;
  if (typeof d?.message === "string") return d.message;
  return JSON.stringify(m.data ?? null);
}
