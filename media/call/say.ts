// The brain speaking outside a turn (BrainFrame Say: a key press, a page message, a timer, an
// outside event). Like LiveKit's session.say() and Pipecat's TTSSpeakFrame it is spoken under the
// rules of any reply (barge-in cuts it, Heard reports what was heard), but unlike them it is never
// queued: a Say that finds the floor taken is refused at once with why, so it never interleaves
// with a turn's reply and never plays stale after the caller has moved on (docs/decisions.md
// "Brain protocol additions"). The turn machine decides the floor; this module the rest.

/** What the call is doing that a Say depends on. */
export interface SayState {
  /** The brain asked to end the call, or it is ending. */
  ending: boolean;
  /** A transfer waits for the bot to fall quiet, or is under way. */
  transferring: boolean;
  /** The caller's audio is running (the call has started listening). */
  listening: boolean;
  /** Speech is still queued or playing (a cut turn's tail, a reply's last frames). */
  botBusy: boolean;
  /** Largest text the bot's queue takes (brainLimits.maxQueuedChars). */
  maxChars: number;
}

/** Why a Say cannot be spoken whatever the floor, or undefined when the floor decides. */
export function sayRefusal(text: string, s: SayState): string | undefined {
  if (text.trim() === "") return "nothing to say: the text is empty";
  if (text.length > s.maxChars) {
    return `the text is ${text.length} characters; a Say takes at most ${s.maxChars}`;
  }
  if (s.ending) return "the call is ending";
  if (s.transferring) return "a transfer is under way";
  if (!s.listening) return "the call has not started listening";
  if (s.botBusy) return "the bot is speaking";
  return undefined;
}

/** The unit id of a Say's one unit: the brain's say_id, or the turn id when it gave none. */
export function sayUnitId(sayId: string, turnId: string): string {
  return sayId || turnId;
}
