// An outbound call's greeting etiquette (issue 34): the callee picks up and says "Hello?"; a bot
// that talks over it sounds like a robocall. So on a call the service placed, the brain's
// greeting is held until the callee's first words end (CALLEE_FIRST, the default, at most wait_ms)
// or for a fixed delay (AFTER_DELAY), per the call's config `outbound_greeting`. Those first words
// are the callee answering the phone, not a turn for the brain: while the greeting is held the
// callee's audio is recorded but not listened to. An inbound call has no gate.
//
// The callee's words are found by frame energy (20 ms RMS over a floor): the gate only needs
// "someone spoke and stopped" on a line just answered, and must decide without the VAD and
// recognition the call has not opened for listening yet.
//
// With answering-machine detection on (the dial's machine_detection hang_up or leave_message), the
// detector's outcome opens the gate instead (ON_DETECTION, media/call/machine_watch.ts): a person
// decided, or a machine's beep (or its absence) on leave_message. The energy rule and the wait
// are not used then: the detector waits for the end of the hello itself and decides by its
// ceiling (4.5 s of audio), and a machine's greeting must not open the gate when it pauses.

/** How the greeting of an outbound call starts. */
export type OutboundGreeting =
  | { start: "callee_first"; waitMs: number }
  | { start: "after_delay"; waitMs: number }
  /** Held until `opens` resolves with why (the answering-machine detector's outcome). */
  | { start: "on_detection"; opens: Promise<string> };

export const CALLEE_FIRST_WAIT_MS = 3_000;
/** A 20 ms frame (16 kHz) louder than this is speech; G.711 line noise sits far below it. */
const SPEECH_RMS = 400;
/** The callee's words: at least this much speech, then this much quiet. */
const SPOKEN_MS = 120;
const QUIET_AFTER_MS = 500;
const FRAME_MS = 20;

/** The rule a connect config (signed into the token) gives; CALLEE_FIRST for 3 s by default. */
export function outboundGreetingOf(config: unknown): OutboundGreeting {
  const g = (config as { outbound_greeting?: { start?: unknown; wait_ms?: unknown } } | null)
    ?.outbound_greeting;
  const wait = typeof g?.wait_ms === "number" && g.wait_ms >= 0 ? Math.min(g.wait_ms, 10_000) : 0;
  if (g?.start === "AFTER_DELAY") return { start: "after_delay", waitMs: wait };
  return { start: "callee_first", waitMs: wait || CALLEE_FIRST_WAIT_MS };
}

import type { SessionEventWriter } from "../../common/session_events.ts";

type HeldUnit = [turnId: string, unitId: string, text: string, last: boolean];

export class GreetingGate {
  private opened = false;
  private readonly held: HeldUnit[] = [];
  private readonly timer?: ReturnType<typeof setTimeout>;
  private readonly since = performance.now();
  private spokenMs = 0;
  private quietMs = 0;

  constructor(
    private readonly rule: OutboundGreeting,
    private readonly log: Pick<SessionEventWriter, "add">,
    /** Where the held units go when the gate opens (the conversation, as if they came now). */
    private readonly speak: { unit(...unit: HeldUnit): void },
  ) {
    if (rule.start === "on_detection") {
      void rule.opens.then((why) => this.open(why));
      return;
    }
    const why = rule.start === "after_delay" ? "delay" : "callee_silent";
    this.timer = setTimeout(() => this.open(why), rule.waitMs);
  }

  /** Whether the greeting's units are still held (hold them with `hold`). */
  get holding(): boolean {
    return !this.opened;
  }

  /**
   * Holds a greeting unit while the gate is shut; false (not held) otherwise. A held unit is the
   * brain's answer all the same: the conversation clears the greeting's timeout.
   */
  hold(...unit: HeldUnit): boolean {
    if (this.opened || unit[0] !== "greeting") return false;
    this.held.push(unit);
    return true;
  }

  /** A 20 ms caller frame: true when it is to be listened to (the gate is open). */
  hear(pcm: Int16Array): boolean {
    if (this.opened) return true;
    if (this.rule.start !== "callee_first") return false;
    let sum = 0;
    for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i];
    const loud = Math.sqrt(sum / Math.max(1, pcm.length)) > SPEECH_RMS;
    if (loud) [this.spokenMs, this.quietMs] = [this.spokenMs + FRAME_MS, 0];
    else if (this.spokenMs >= SPOKEN_MS) this.quietMs += FRAME_MS;
    if (this.spokenMs >= SPOKEN_MS && this.quietMs >= QUIET_AFTER_MS) this.open("callee_spoke");
    return false;
  }

  private open(why: string): void {
    if (this.opened) return;
    this.opened = true;
    clearTimeout(this.timer);
    const waited_ms = Math.round(performance.now() - this.since);
    this.log.add("worker", "greeting_released", { why, waited_ms });
    for (const unit of this.held.splice(0)) this.speak.unit(...unit);
  }

  stop(): void {
    this.opened = true;
    clearTimeout(this.timer);
  }
}
