// The example brain: repeats what the caller said, tells a long story to interrupt, places an
// order ("order 42"), ends on "bye". A session whose init has `speculative_turns: true` gets
// speculative turns (docs/brain-guide.md, "Speculative turns").
import { type Brain, createBrain } from "../mod.ts";

const STORY = [
  "Once upon a time, a small robot lived in a lighthouse by the sea.",
  "Every night it counted the ships that passed and wished one of them would stop.",
  "One stormy evening a fishing boat lost its way, and the robot turned its lamp toward it.",
  "The fishermen followed the light home and came back the next day to say thank you.",
  "From then on the robot was never lonely again, and that is the end of the story.",
];

/**
 * Builds the example brain. Serve it with `deno run -A sdk/brain/example/main.ts`.
 * @param orders where the orders it places are recorded (its stand-in for a database)
 */
export function createExampleBrain(orders: string[] = []): Brain {
  return createBrain({
    onSessionStart(session) {
      // Replies sooner: each reply is made while the worker waits to see if the caller goes on.
      if (session.init.speculative_turns === true) {
        session.configure({ turns: { speculative: true } });
      }
      return "Hello! I am the example brain. Say something and I will repeat it.";
    },

    async *onTurn(turn, session) {
      // Shows on the page; `typed`: the caller typed it (the page's text box) rather than spoke it.
      // On a speculative turn the SDK holds it until the turn is confirmed, and drops it if not.
      session.dispatch("transcript", { turn_id: turn.id, text: turn.text, typed: turn.typed });
      const words = turn.text.toLowerCase();
      if (/\b(good)?bye\b/.test(words)) {
        yield "Goodbye! Thanks for calling.";
        session.end("caller said goodbye");
        return;
      }
      const order = /\border (\d+)\b/.exec(words)?.[1];
      if (order) {
        yield `Placing order ${order}.`; // spoken only if the caller's turn is taken
        // The SDK cannot hold a write to a database: wait until the caller's turn is taken (on
        // a speculative turn the caller may go on, and then this turn is cancelled).
        if (!(await turn.confirmed)) return;
        orders.push(order);
        session.dispatch("order_placed", { order });
        yield `Order ${order} is placed.`;
        return;
      }
      yield `You said: ${turn.text}`;
      if (/\b(story|stories|long)\b/.test(words)) {
        for (const sentence of STORY) {
          if (turn.signal.aborted) return; // the caller interrupted
          yield sentence;
        }
      }
    },

    onRtvi(message, session) {
      // Page messages arrive verbatim; the client's sendClientMessage("ping", d) sends
      // {type: "client-message", data: {t: "ping", d}}.
      const kind = message.type === "client-message" ? message.data?.t : message.type;
      if (kind === "ping") {
        session.dispatch("pong", { at: Date.now(), got: message.data?.d ?? null });
      }
    },

    onUserIdle: () => "Are you still there?",

    onSessionEnd(session, { reason, heard }) {
      console.log(`session ${session.id} ended (${reason}); caller heard ${heard.length} units`);
    },
  });
}
