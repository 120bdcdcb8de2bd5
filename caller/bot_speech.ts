// The bot's speech as the caller heard it, unit by unit, read from the worker's RTVI bot-output
// messages. The worker plays one unit at a time and tells the page of each: "new" when its audio
// starts, "in-progress" as words go out, "completed" with what was heard (cut short on a barge-in).
// A unit still queued when the caller barges in is reported "completed" with nothing heard and
// never "new": it was never heard, so it is no part of the conversation. Units are told apart by
// this order, never by their text: a reply may say the same sentence twice.
import type { RtviMessage } from "./caller.ts";

/** One unit whose audio started playing. */
export interface HeardUnit {
  text: string;
  /** What of `text` the caller heard so far; all of it once done uncut. */
  heard: string;
  /** Index (in the call's received messages) of its "new" message. */
  startedAt: number;
  /** Its "completed" message's index; null while it plays. */
  doneAt: number | null;
  /** Stopped before its end (a barge-in, or the call ended). */
  cutOff: boolean;
}

interface BotOutput {
  text?: string;
  spoken_status?: string;
  spoken_progress?: { accumulated_text?: string; remaining_text?: string };
}

/** What one message changed: a unit started or finished, or nothing to tell. */
export type SpeechChange =
  | { kind: "started"; unit: HeardUnit }
  | { kind: "done"; unit: HeardUnit }
  | null;

export class BotSpeech {
  /** Every unit that started playing, in order. */
  readonly units: HeardUnit[] = [];
  #playing: HeardUnit | null = null;

  /** Reads message number `index` of the call. */
  add(index: number, m: RtviMessage): SpeechChange {
    if (m.label !== "rtvi-ai" || m.type !== "bot-output") return null;
    const d = (m.data ?? {}) as BotOutput;
    const text = String(d.text ?? "");
    const heard = d.spoken_progress?.accumulated_text ?? "";
    if (d.spoken_status === "new") {
      const unit: HeardUnit = { text, heard: "", startedAt: index, doneAt: null, cutOff: false };
      this.units.push(unit);
      this.#playing = unit;
      return { kind: "started", unit };
    }
    const unit = this.#playing;
    // Progress or an end of a unit that never started playing: it was never heard.
    if (!unit || unit.text !== text) return null;
    unit.heard = heard;
    if (d.spoken_status !== "completed") return null;
    unit.doneAt = index;
    unit.cutOff = (d.spoken_progress?.remaining_text ?? "").trim() !== "";
    this.#playing = null;
    return { kind: "done", unit };
  }

  /** The units that started at message `from` or later. */
  since(from: number): HeardUnit[] {
    return this.units.filter((u) => u.startedAt >= from);
  }
}

/** Units' text joined, as one reply reads: what the bot said (started) or what was heard. */
export function joined(units: readonly HeardUnit[], what: "text" | "heard"): string {
  return units.map((u) => u[what].trim()).filter((t) => t !== "").join(" ");
}
