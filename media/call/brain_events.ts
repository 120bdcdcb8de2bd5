// What the brain asked to be told beyond its turns (Config.events; all off by default, so a brain
// that never asks gets no frame it does not know): the caller starting and stopping speech, the
// recogniser's interim text, and each turn's latency steps once the turn is over. An outbound
// call's machine detection is told whatever Config.events says: the dial asked for it.
import type { CallerEvents } from "./call_config.ts";
import type { TurnRecord } from "./turn_record.ts";

/**
 * Interim text goes at most this often: a brain preparing an answer needs the gist, not every
 * partial hypothesis (the recogniser may give one per 20 ms frame), and the socket stays quiet.
 */
export const INTERIM_MIN_MS = 250;

/** An outbound call's answering-machine outcomes (machine_watch.ts). */
export type DetectionFrame = "machine_detected" | "beep";
export type EventFrame = "user_speech" | "interim_text" | "turn_metrics" | DetectionFrame;

export class BrainEvents {
  #interimAt = -Infinity;
  #interim = "";
  /** Turns whose metrics went (a cut turn may also play out its tail). */
  #measured = new Set<string>();

  constructor(
    private send: (kind: EventFrame, body: Record<string, unknown>) => void,
    private wanted: () => CallerEvents,
    private now: () => number = () => performance.now(),
  ) {}

  /** Who answered an outbound call, or its machine's beep: always sent. */
  detection(kind: DetectionFrame, body: Record<string, unknown>): void {
    this.send(kind, body);
  }

  /** The caller began an utterance; overBot: the bot was speaking then. */
  speechStarted(overBot: boolean): void {
    this.#interim = "";
    if (this.wanted().speech) this.send("user_speech", { speaking: true, over_bot: overBot });
  }

  speechStopped(): void {
    if (this.wanted().speech) this.send("user_speech", { speaking: false, over_bot: false });
  }

  /** An interim hypothesis: dropped when it repeats the last one or comes too soon after it. */
  interim(text: string): void {
    if (!this.wanted().interim_text || text === this.#interim) return;
    const at = this.now();
    if (at - this.#interimAt < INTERIM_MIN_MS) return;
    this.#interimAt = at;
    this.#interim = text;
    this.send("interim_text", { text });
  }

  /** A turn is over (played out or cut off): its latency steps, once. */
  turnOver(record: TurnRecord | undefined): void {
    if (!record || this.#measured.has(record.turn_id)) return;
    this.#measured.add(record.turn_id);
    if (!this.wanted().turn_metrics) return;
    this.send("turn_metrics", {
      turn_id: record.turn_id,
      trigger: record.trigger,
      latency_ms: { ...record.latency_ms },
      interrupted: record.interrupted,
    });
  }
}
