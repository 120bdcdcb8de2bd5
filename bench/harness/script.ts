// What a bench's scripted call says and hears, shared so that figures from different benches
// (provider_calls, call_density, soak, call_turns, turn_latency) are of the same conversation.
import { createBrain } from "../../sdk/brain/mod.ts";

/** The caller's lines, spoken with festival (tests/helpers/call_harness.ts `speech`). */
export const LINES = [
  "what is the weather like today",
  "please book a table for two",
  "i would like to check my order",
];
export const GREETING = "Hello, how can I help?";
/** One- or two-sentence replies: the same text whatever was recognised, so configs compare. */
export const REPLIES = [
  "It will be sunny and warm all day.",
  "Your table for two is booked for seven tonight. Is there anything else?",
  "Your order left the warehouse this morning. It should arrive tomorrow.",
];

/** A brain that greets and answers a session's k-th turn with `replies[k % replies.length]`. */
export function replyingBrain(replies: string[] = REPLIES, greeting = GREETING) {
  const turnsOf = new Map<string, number>();
  return createBrain({
    onSessionStart: () => greeting,
    onTurn(_turn, session) {
      const k = turnsOf.get(session.id) ?? 0;
      turnsOf.set(session.id, k + 1);
      return replies[k % replies.length];
    },
    onSessionEnd: (session) => void turnsOf.delete(session.id),
  });
}
