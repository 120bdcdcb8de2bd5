import assert from "node:assert/strict";
import { BotSpeech, joined } from "./bot_speech.ts";

// The worker's bot-output messages (media/rtvi/observer.ts), as a page receives them.
const out = (text: string, status: string, heard = "") => ({
  label: "rtvi-ai",
  type: "bot-output",
  data: {
    text,
    spoken_status: status,
    spoken_progress: { accumulated_text: heard, remaining_text: text.slice(heard.length) },
  },
});
const event = (type: string) => ({ label: "rtvi-ai", type });

Deno.test("a barge-in: the cut unit counts as far as it was heard, queued units never, the new reply's first unit does", () => {
  const speech = new BotSpeech();
  const messages = [
    out("Once upon a time.", "new"),
    out("Once upon a time.", "completed", "Once upon a time."),
    out("A robot lived by the sea.", "new"),
    out("A robot lived by the sea.", "in-progress", "A robot"),
    // The caller talks: the playing unit is cut, the queued one dropped unheard.
    out("A robot lived by the sea.", "completed", "A robot"),
    out("It counted the ships.", "completed", ""),
    event("bot-stopped-speaking"),
    event("user-started-speaking"),
    // The new reply, whose first sentence is the same text as an earlier one.
    event("bot-started-speaking"),
    out("Once upon a time.", "new"),
    out("Once upon a time.", "completed", "Once upon a time."),
    out("You said: wait.", "new"),
    out("You said: wait.", "completed", "You said: wait."),
  ];
  const done: string[] = [];
  messages.forEach((m, i) => {
    const c = speech.add(i, m);
    if (c?.kind === "done") done.push(`${c.unit.heard}${c.unit.cutOff ? " [cut]" : ""}`);
  });
  assert.deepEqual(done, [
    "Once upon a time.",
    "A robot [cut]",
    "Once upon a time.",
    "You said: wait.",
  ]);
  // What a reply after the barge-in (message 7 on) is: the new reply whole, nothing unheard.
  assert.equal(joined(speech.since(7), "heard"), "Once upon a time. You said: wait.");
  assert.equal(
    joined(speech.since(0), "text"),
    "Once upon a time. A robot lived by the sea. Once upon a time. You said: wait.",
  );
  assert.equal(
    joined(speech.since(0), "heard"),
    "Once upon a time. A robot Once upon a time. You said: wait.",
  );
});

Deno.test("a unit still playing counts by its text and has heard what went out so far", () => {
  const speech = new BotSpeech();
  speech.add(0, out("Hello there, caller.", "new"));
  speech.add(1, out("Hello there, caller.", "in-progress", "Hello there,"));
  const [u] = speech.units;
  assert.deepEqual(u, {
    text: "Hello there, caller.",
    heard: "Hello there,",
    startedAt: 0,
    doneAt: null,
    cutOff: false,
  });
  assert.equal(speech.add(2, event("bot-stopped-speaking")), null);
});
