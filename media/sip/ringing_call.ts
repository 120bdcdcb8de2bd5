// A phone call prepared while it rings (issue 35). A caller waited, after the 200 OK, for the
// worker to open the VAD and recognition, dial the brain, send SessionStart, get the Greeting and
// synthesize it: dead air on a line already answered. Now the call starts as soon as the INVITE
// is admitted and answerable (after the 180): the brain gets SessionStart and its Greeting is
// synthesized while the phone rings, and the 200 OK goes out when the greeting's first audio is
// waiting, so it plays from the answer on.
//
// The answer waits at most RING_FOR_GREETING_MAX_MS (3 s, about one ring cycle of an Indian
// ringback, 0.4 on 0.2 off 0.4 on 2.0 off): a brain that is slow or never greets is answered then
// and the call goes on as before (its greeting timeout, 10 s, still applies). A call that fails
// before its answer (the brain unreachable, no engine) is refused with 480 instead of answered
// and hung up: the caller is not billed for a call that was never going to speak, and the trunk
// may route it on. A CANCEL while it rings ends the call as a hang-up does. The brain may act
// before the answer: an EndSession with nothing left to say refuses the call (480) as a failure
// does; a Transfer waits for the answer (REFER needs the dialog), its greeting played first.
//
// The audio is held, not sent, until the answer: RTP before a 2xx would be early media, which
// needs a 183 with SDP (RFC 3261 13.2.1, RFC 3262 for it to be reliable) and which many trunks
// play as ringback or drop; a greeting heard that way would also be cut by the 200 on some.
import type { LineDialogs, LineMedia } from "./sip_line.ts";
import type { AnswerChoice } from "./sdp.ts";
import type { Call } from "../call/call.ts";

export const RING_FOR_GREETING_MAX_MS = 3_000;

/** The call's RTP, its outbound pacing held until the call is answered. */
export class HeldMedia implements LineMedia {
  private held?: [AnswerChoice, string | undefined];
  private answered = false;
  private resolveAnswered!: () => void;
  /** Resolves at the answer (never, for a call that ends while it rings). */
  readonly whenAnswered = new Promise<void>((r) => (this.resolveAnswered = r));

  constructor(private readonly media: LineMedia) {}

  get onCallerFrame() {
    return this.media.onCallerFrame;
  }
  get onDtmf() {
    return this.media.onDtmf;
  }
  get onMediaTimeout() {
    return this.media.onMediaTimeout;
  }
  get pacing() {
    return this.media.pacing;
  }

  /** The line starts its media at once: held here until `answer`. */
  start(choice: AnswerChoice, signalling?: string): void {
    if (this.answered) return this.media.start(choice, signalling);
    this.held = [choice, signalling];
  }

  /** The 200 OK went out: the media starts, and what waits to play plays. */
  answer(): void {
    if (this.answered) return;
    this.answered = true;
    if (this.held) this.media.start(...this.held);
    this.resolveAnswered();
  }

  update(choice: AnswerChoice): void {
    this.media.update(choice);
  }
  play(source: Parameters<LineMedia["play"]>[0]): void {
    this.media.play(source);
  }
  clear(): void {
    this.media.clear();
  }
  stats(): Record<string, number> {
    return this.media.stats();
  }
  close(): Promise<void> {
    return this.media.close();
  }
}

/**
 * The call's dialogs as its line uses them: a transfer the brain asks for while the call rings
 * (a router that hands every call on at once) waits for the answer, as a REFER needs the dialog.
 */
export function heldDialogs(dialogs: LineDialogs, media: HeldMedia): LineDialogs {
  return {
    hangUp: (callId) => dialogs.hangUp(callId),
    transfer: (callId, referTo, outcomeMs) =>
      media.whenAnswered.then(() => dialogs.transfer(callId, referTo, outcomeMs)),
    // A warm transfer's REFER with Replaces names the person's call: it exists only once answered.
    replacing: dialogs.replacing && ((callId) => dialogs.replacing!(callId)),
  };
}

/**
 * Resolves when the call may be answered: its greeting's first audio is waiting, the call has
 * ended (refused then, not answered), or `maxMs` has passed. Never rejects.
 */
export async function greetingReady(
  call: Pick<Call, "conversation" | "endStatus">,
  maxMs = RING_FOR_GREETING_MAX_MS,
): Promise<void> {
  const until = performance.now() + maxMs;
  // Polled at 10 ms: the speaker has no event for "audio waiting", and a ringing call is short.
  while (performance.now() < until) {
    if (call.endStatus !== undefined || call.conversation?.speaker.audioWaiting) return;
    await new Promise((r) => setTimeout(r, 10));
  }
}
