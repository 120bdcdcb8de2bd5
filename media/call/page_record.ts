// A call without a page (a phone call): what a web call's RTVI would tell the page is written to
// the session log instead, so the record tells the same story whatever the line.
import type { PhoneEvents, RtviEvents } from "../../common/session_events.ts";
import type { RtviEmitter } from "../rtvi/observer.ts";
import type { SessionLog } from "./session_log.ts";

/**
 * What the page would have been told, recorded: the caller's final words, the bot's finished
 * units, errors and the brain's actions. Interim transcripts and a unit's progress are left out:
 * the turn record already has their timing, and on a phone call nobody watches them.
 */
export class PageRecord implements RtviEmitter {
  constructor(private readonly log: SessionLog) {}

  emit<T extends keyof RtviEvents>(type: T, data?: PhoneEvents[T]): boolean {
    const d = data as Record<string, unknown> | undefined;
    if (type === "user-transcription" && !d?.final) return true;
    if (type === "bot-output" && d?.spoken_status !== "completed") return true;
    this.log.add("phone", type, data ?? ({} as PhoneEvents[T])); // stored as {} either way
    return true;
  }
}
