// Speaking outside a turn, caller events and turn metrics through the whole service (API, worker
// process, WebRTC caller, the TS SDK brain). A page message makes the brain say something: it is
// spoken as a turn of its own and heard whole; asked again while a reply plays it is refused with
// why; a long Say the caller talks over is cut as a reply is. The brain asked for caller events and
// metrics: it hears the caller start over the bot, and each turn's latency steps equal the
// session record's.
import { assert, assertEquals } from "./helpers/assert.ts";
import { speech, startCallService, waitForLog } from "./helpers/call_harness.ts";
import type { TestCaller } from "../caller/caller.ts";
import {
  createBrain,
  type SayOutcome,
  type TurnMetrics,
  type UserSpeech,
} from "../sdk/brain/mod.ts";

const SHIPPED = "Your order has shipped.";
const LONG = "Here is everything about your order. It left our warehouse this morning, " +
  "it travels by road to the city hub tonight, and a courier brings it to your door tomorrow " +
  "between nine and noon. You will get a message with the courier's name before they arrive.";

const STORY = "A keeper lived there with a cat, and every night they lit the lamp together, " +
  "and every morning they counted the ships that had passed safely in the dark.";

/** A page message matching `match` that arrives after this call (not one already there). */
function nextMessage(caller: TestCaller, match: (m: { type: string; data?: unknown }) => boolean) {
  const since = caller.messages.length;
  return caller.waitForMessage((m) => caller.messages.indexOf(m) >= since && match(m), 20_000);
}

function sayingBrain() {
  const outcomes: SayOutcome[] = [];
  const speech: UserSpeech[] = [];
  const metrics: TurnMetrics[] = [];
  const brain = createBrain({
    onSessionStart: (session) => {
      session.configure({ events: { speech: true, interim_text: true, turn_metrics: true } });
      return "Hi.";
    },
    onTurn: (turn) =>
      /story/.test(turn.text)
        ? ["Once upon a time there was a lighthouse.", STORY, STORY]
        : `You said ${turn.text}.`,
    onRtvi: async (message, session) => {
      const text = message.data?.t === "long" ? LONG : SHIPPED;
      outcomes.push(await session.say(text));
    },
    onUserSpeech: (s) => void speech.push(s),
    onTurnMetrics: (m) => void metrics.push(m),
  });
  return { brain, outcomes, speech, metrics };
}

const botText = (m: { data?: unknown }) => String((m.data as { text?: unknown })?.text ?? "");
const status = (m: { data?: unknown }) => (m.data as { spoken_status?: string })?.spoken_status;

async function until<T>(what: string, get: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("a brain says things outside a turn under the reply rules, and is told what the caller does", async () => {
  const b = sayingBrain();
  // Made first: festival on a loaded host may take longer than the Say it is to talk over.
  const words = await speech("wait a moment please");
  const service = await startCallService(b.brain);
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    // A free floor: the Say is its own turn, spoken and heard whole.
    caller.sendRtvi("client-message", { t: "shipped" });
    const said = await until("the first say's outcome", () => b.outcomes[0]);
    assertEquals(said, { turnId: "t1", heard: SHIPPED, cutOff: false });
    await caller.waitForMessage((m) => m.type === "bot-output" && botText(m) === SHIPPED);

    // While a reply plays, a Say is refused, and the reply goes on.
    caller.sendRtvi("send-text", { content: "tell me a story", options: {} });
    await caller.waitForMessage(
      (m) => m.type === "bot-output" && status(m) === "new" && botText(m).startsWith("Once"),
      20_000,
    );
    caller.sendRtvi("client-message", { t: "shipped" });
    const refused = await until("the refused say's outcome", () => b.outcomes[1]);
    assertEquals(refused.turnId, "");
    assert(/bot/.test(refused.refused ?? ""), `refused: ${refused.refused}`);
    await caller.waitForMessage((m) => m.type === "bot-output" && botText(m) === STORY, 20_000);

    // Talked over, a long Say is cut as a reply is: Cancel, a cut-off Heard, the brain told.
    caller.sendRtvi("send-text", { content: "stop", options: {} });
    await caller.waitForMessage((m) =>
      m.type === "bot-output" && status(m) === "new" && botText(m) === "You said stop."
    );
    // The cut story stopped the bot once already: this is the reply's own end.
    await nextMessage(caller, (m) => m.type === "bot-stopped-speaking");
    const longStarts = nextMessage(
      caller,
      (m) => m.type === "bot-output" && status(m) === "new" && botText(m) === LONG,
    );
    caller.sendRtvi("client-message", { t: "long" });
    await longStarts;
    await new Promise((r) => setTimeout(r, 1500));
    await caller.say(words);
    const cut = await until("the cut say's outcome", () => b.outcomes[2]);
    assertEquals(cut.cutOff, true, `the long say was not cut: ${JSON.stringify(cut)}`);
    assert(cut.heard.length > 0 && LONG.startsWith(cut.heard), `heard "${cut.heard}"`);
    const cancel = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "cancel" && e.data.turn_id === cut.turnId,
    );
    assert(cancel);
    assert(
      b.speech.some((s) => s.speaking && s.overBot),
      `speech events: ${JSON.stringify(b.speech)}`,
    );
    await until("the caller's speech end", () => b.speech.find((s) => !s.speaking));

    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    const turns = record.timings.turns as {
      turn_id: string;
      trigger: string;
      interrupted: boolean;
      latency_ms: Record<string, number>;
    }[];
    const sayTurns = turns.filter((t) => t.trigger === "say");
    assertEquals(sayTurns.map((t) => [t.turn_id, t.interrupted]), [
      ["t1", false],
      [cut.turnId, true],
    ]);
    // Every turn that was over before the hang-up had its metrics sent, equal to the record's.
    await until("the metrics of the cut say", () => b.metrics.find((m) => m.turnId === cut.turnId));
    for (const m of b.metrics) {
      const t = turns.find((r) => r.turn_id === m.turnId)!;
      const { heard_at_caller: _, ...steps } = t.latency_ms;
      assertEquals(
        [m.trigger, m.interrupted, m.latencyMs],
        [t.trigger, t.interrupted, steps],
        `metrics of ${m.turnId}: ${JSON.stringify(m)} against the record's ${JSON.stringify(t)}`,
      );
    }
    const measured = b.metrics.map((m) => m.turnId);
    for (const id of ["greeting", "t1", "t2", cut.turnId]) {
      assert(measured.includes(id), `no metrics for ${id}: ${measured}`);
    }
    const firstSay = b.metrics.find((m) => m.turnId === "t1")!;
    assert(firstSay.latencyMs.synthesis >= 0, JSON.stringify(firstSay));
  } finally {
    await service.close();
  }
});

Deno.test("a brain that asks for no events gets none of the new frames", async () => {
  const seen: string[] = [];
  const brain = createBrain({
    onSessionStart: () => "Hi.",
    onTurn: (turn) => `You said ${turn.text}.`,
    onUserSpeech: () => void seen.push("speech"),
    onInterimText: () => void seen.push("interim"),
    onTurnMetrics: () => void seen.push("metrics"),
  });
  const service = await startCallService(brain);
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await caller.say(await speech("what time is it"));
    await waitForLog(service, sessionId, (e) => e.source === "to_brain" && e.kind === "user_turn");
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    const sent = new Set(
      record.log.filter((e: { source: string }) => e.source === "to_brain").map((
        e: { kind: string },
      ) => e.kind),
    );
    for (const kind of ["user_speech", "interim_text", "turn_metrics"]) {
      assert(!sent.has(kind), `${kind} was sent unasked: ${[...sent]}`);
    }
    assertEquals(seen, []);
  } finally {
    await service.close();
  }
});
