// A recorded session read back from its log (sessions.get): what the worker told the brain on
// the caller's behalf (the session start, each turn, typed or recognised, page messages, idle
// nudges, cancellations on barge-in) and what the brain answered, grouped into exchanges. An
// exchange is what the brain answered after one caller event: exchange 0 is the greeting, the
// answers after the session start. Speech units go with the turn they name (a slow brain's unit
// can land in the log after the next turn); actions, config changes and the end go by position.
import { isEvent, type LoggedEvent, type SessionEventKind } from "../common/session_events.ts";

/** A session log entry as sessions.get returns it (JSON: `at` an ISO string). */
export type LogEntry = LoggedEvent<string>;

/** What the worker sent for the caller, as it was logged (the frame body without its seq). */
export type CallerEvent =
  | { kind: "user_turn"; body: { turn_id: string; text: string } & Record<string, unknown> }
  | { kind: "client_message"; body: { json: string } }
  | { kind: "user_idle"; body: { idle_ms: number; turn_id: string } }
  /** Sent in the recording after `afterUnits` units of the turn had come. */
  | { kind: "cancel"; body: { turn_id: string }; afterUnits: number };

export type Answer =
  | { kind: "unit"; turn_id: string; text: string }
  | { kind: "action"; type: string; data: unknown }
  | { kind: "config"; config: unknown }
  | { kind: "end"; reason: string };

export interface Recording {
  sessionId: string;
  start: Record<string, unknown>;
  events: CallerEvent[];
  /** answers[0]: after the session start; answers[i]: after events[i - 1]. */
  answers: Answer[][];
  /** Why the worker ended the session with the brain (its End frame), if it did. */
  endReason: string | null;
}

const withoutSeq = (d: Record<string, unknown>) => {
  const { seq: _s, timestamp_ms: _t, ...body } = d ?? {};
  return body;
};

/** The JSON an action carried, parsed when it is JSON (the worker delivers it so). */
export function actionData(json: unknown): unknown {
  if (typeof json !== "string") return json;
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

/** A config patch without what it leaves unset (nulls, enum zero values), as the brain wrote it. */
function setOnly(v: unknown): unknown {
  if (v === null || (typeof v === "string" && v.endsWith("_UNSPECIFIED"))) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const kept = setOnly(x);
    if (kept !== undefined && !(typeof kept === "object" && Object.keys(kept!).length === 0)) {
      out[k] = kept;
    }
  }
  return out;
}

/**
 * The brain-side answer a brain frame body is, or null for frames that are none (a unit with no
 * text only closes its turn).
 */
export function answerOf(
  kind: SessionEventKind<"from_brain">,
  body: Record<string, unknown>,
): Answer | null {
  switch (kind) {
    case "greeting":
      return { kind: "unit", turn_id: "greeting", text: String(body.text ?? "") };
    case "speech_unit":
      if (!body.text) return null;
      return { kind: "unit", turn_id: String(body.turn_id ?? ""), text: String(body.text ?? "") };
    case "action":
      return { kind: "action", type: String(body.type ?? ""), data: actionData(body.json) };
    case "config":
      return { kind: "config", config: setOnly(withoutSeq(body)) };
    case "end_session":
      return { kind: "end", reason: String(body.reason ?? "") };
  }
  return null;
}

/** Reads a session's log; throws when it holds no session start (nothing to replay). */
export function readRecording(sessionId: string, log: LogEntry[]): Recording {
  const startEntry = log.find((e) => isEvent(e, "to_brain", "session_start"));
  if (!startEntry) {
    throw new Error(`session ${sessionId} never reached its brain: its log has no session_start`);
  }
  const events: CallerEvent[] = [];
  const answers: Answer[][] = [[]];
  const exchangeOfTurn = new Map<string, number>([["greeting", 0]]);
  const unitsOfTurn = new Map<string, number>();
  let endReason: string | null = null;
  for (const e of log) {
    if (e.source === "to_brain") {
      const body = withoutSeq(e.data);
      if (e.kind === "user_turn") {
        events.push({ kind: "user_turn", body: body as { turn_id: string; text: string } });
        exchangeOfTurn.set(String(body.turn_id), events.length);
      } else if (e.kind === "client_message") {
        events.push({ kind: "client_message", body: body as { json: string } });
      } else if (e.kind === "user_idle") {
        events.push({ kind: "user_idle", body: body as { idle_ms: number; turn_id: string } });
      } else if (e.kind === "cancel") {
        const turn = String(body.turn_id);
        events.push({
          kind: "cancel",
          body: { turn_id: turn },
          afterUnits: unitsOfTurn.get(turn) ?? 0,
        });
      } else if (e.kind === "end") endReason = String(body.reason ?? "");
      else continue;
      if (e.kind !== "end") answers.push([]);
    } else if (e.source === "from_brain") {
      const a = answerOf(e.kind, e.data ?? {});
      if (!a) continue;
      let at = answers.length - 1;
      if (a.kind === "unit") {
        at = exchangeOfTurn.get(a.turn_id) ?? at;
        unitsOfTurn.set(a.turn_id, (unitsOfTurn.get(a.turn_id) ?? 0) + 1);
      }
      answers[at].push(a);
    }
  }
  return { sessionId, start: withoutSeq(startEntry.data), events, answers, endReason };
}

/** One line naming a caller event. */
export function describeEvent(e: CallerEvent | null): string {
  if (e === null) return "the session start (greeting)";
  switch (e.kind) {
    case "user_turn":
      return `turn ${e.body.turn_id}${e.body.typed ? " (typed)" : ""}: "${e.body.text}"`;
    case "client_message":
      return `page message ${e.body.json.slice(0, 120)}`;
    case "user_idle":
      return `caller idle ${e.body.idle_ms} ms (turn ${e.body.turn_id})`;
    case "cancel":
      return `barge-in: cancel turn ${e.body.turn_id} after ${e.afterUnits} unit${
        e.afterUnits === 1 ? "" : "s"
      }`;
  }
}
