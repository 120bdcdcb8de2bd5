// The brain's frames as the call acts on them: the wire's loose bodies (proto/frames.ts decodes
// them) read into typed requests, so the call only wires. A greeting is a unit of turn
// `greeting`; an action's JSON is parsed for the page (not JSON: delivered as the text it is).
import type { BrainFrame } from "./connection.ts";

/** What the caller heard of a unit (media/speech/speaker.ts's UnitHeard). */
export interface HeardUnit {
  unitId: string;
  turnId: string;
  heard: string;
  cutOff: boolean;
}

export type BrainRequest =
  /** Speech to play: a unit of a turn (`last` ends the turn's reply). */
  | { kind: "unit"; turnId: string; unitId: string; text: string; last: boolean }
  /** An action for the page: `type` as sent, `data` the parsed JSON (or the text, or null). */
  | { kind: "action"; type: unknown; data: unknown }
  /** A config patch (applied if the engines serve it; media/call/call_config.ts). */
  | { kind: "config"; patch: Record<string, unknown> }
  | { kind: "end_session"; reason: string }
  /** Hand a phone call to `target` (tel:/sip: URI or E.164); refused on a web call. */
  | { kind: "transfer"; target: string; whisper: string; ringTimeoutMs: number }
  /** Speak outside a turn (media/call/say.ts). */
  | { kind: "say"; sayId: string; text: string };

/** What a frame asks of the call; undefined for frames the call does not act on. */
export function readBrainFrame(f: BrainFrame): BrainRequest | undefined {
  const b = f.body;
  switch (f.kind) {
    case "greeting":
      return {
        kind: "unit",
        turnId: "greeting",
        unitId: "greeting",
        text: text(b.text),
        last: true,
      };
    case "speech_unit":
      return {
        kind: "unit",
        turnId: String(b.turn_id),
        unitId: String(b.unit_id),
        text: text(b.text),
        last: Boolean(b.last),
      };
    case "action":
      return { kind: "action", type: b.type, data: actionData(b.json) };
    case "config":
      return { kind: "config", patch: b };
    case "end_session":
      return { kind: "end_session", reason: String(b.reason || "brain_ended") };
    case "transfer":
      return {
        kind: "transfer",
        target: text(b.target).trim(),
        whisper: text(b.whisper).trim(),
        ringTimeoutMs: Number(b.ring_timeout_ms ?? 0) || 0,
      };
    case "say":
      return { kind: "say", sayId: text(b.say_id), text: text(b.text) };
  }
  return undefined;
}

function text(v: unknown): string {
  return String(v ?? "");
}

/** An action's JSON, parsed; not JSON: the text it is; absent or empty: null. */
export function actionData(json: unknown): unknown {
  if (!json) return null;
  try {
    return JSON.parse(json as string);
  } catch {
    return json;
  }
}

/** A unit's Heard (and Finalize's entries), as the brain gets it. */
export function heardBody(u: HeardUnit) {
  return { unit_id: u.unitId, turn_id: u.turnId, text: u.heard, cut_off: u.cutOff };
}
