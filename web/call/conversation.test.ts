import assert from "node:assert/strict";
import { Conversation } from "./conversation.ts";

const t = (text: string, final: boolean) => ({ text, final, timestamp: "", user_id: "" });
const out = (
  text: string,
  spoken_status: "new" | "in-progress" | "completed",
  heard: string,
  segment_id?: number,
) => ({
  text,
  aggregated_by: "sentence",
  will_be_spoken: true,
  spoken_status,
  spoken_progress: { accumulated_text: heard, remaining_text: text.slice(heard.length) },
  ...(segment_id === undefined ? {} : { segment_id }),
});

Deno.test("interim transcripts are replaced by the next interim and by their final", () => {
  const c = new Conversation();
  c.userTranscript(t("what", false));
  c.userTranscript(t("what is the", false));
  c.userTranscript(t("what is the weather", true));
  c.userTranscript(t("and", false));
  assert.deepEqual(c.transcript, [
    { seq: 0, text: "what is the weather", final: true },
    { seq: 1, text: "and", final: false },
  ]);
});

Deno.test("a typed line's echo is its own line marked typed, leaving a grey interim alone", () => {
  const c = new Conversation();
  c.userTranscript(t("uh", false));
  c.typed("  my order is 42 ");
  c.userTranscript(t("my order is 42", true));
  c.userTranscript(t("uh huh", true));
  c.userTranscript(t("my order is 42", true)); // said, not typed again: an ordinary line
  assert.deepEqual(c.transcript, [
    { seq: 0, text: "uh huh", final: true },
    { seq: 1, text: "my order is 42", final: true, typed: true },
    { seq: 2, text: "my order is 42", final: true },
  ]);
});

Deno.test("bot output progress updates one unit; completed with text left is cut off", () => {
  const c = new Conversation();
  c.botOutput(out("Hello there.", "new", ""));
  c.botOutput(out("Hello there.", "in-progress", "Hello "));
  c.botOutput(out("Hello there.", "completed", "Hello there."));
  c.botOutput(out("You said: hi.", "new", ""));
  c.botOutput(out("You said: hi.", "completed", "You said"));
  assert.deepEqual(
    c.bot.map((u) => [u.text, u.heard, u.remaining, u.status, u.cutOff]),
    [
      ["Hello there.", "Hello there.", "", "completed", false],
      ["You said: hi.", "You said", ": hi.", "completed", true],
    ],
  );
});

Deno.test("the same text said twice makes two units; progress goes to the open one", () => {
  const c = new Conversation();
  c.botOutput(out("Yes.", "new", ""));
  c.botOutput(out("Yes.", "completed", "Yes."));
  c.botOutput(out("Yes.", "new", ""));
  c.botOutput(out("Yes.", "in-progress", "Ye"));
  assert.deepEqual(c.bot.map((u) => [u.heard, u.status]), [["Yes.", "completed"], [
    "Ye",
    "in-progress",
  ]]);
});

Deno.test("segment ids pick the unit when the server sends them", () => {
  const c = new Conversation();
  c.botOutput(out("One.", "new", "", 1));
  c.botOutput(out("Two.", "new", "", 2));
  c.botOutput(out("One.", "completed", "On", 1));
  assert.deepEqual(c.bot.map((u) => [u.segmentId, u.status, u.cutOff]), [
    [1, "completed", true],
    [2, "new", false],
  ]);
});

Deno.test("bot output without speech progress is shown whole with nothing marked heard", () => {
  const c = new Conversation();
  c.botOutput({ text: "Plain." });
  assert.deepEqual(c.bot, [
    { seq: 0, text: "Plain.", heard: "", remaining: "Plain.", status: "new", cutOff: false },
  ]);
});

Deno.test("the timeline interleaves caller lines and bot units in the order they began", () => {
  const c = new Conversation();
  c.botOutput(out("Hi.", "new", ""));
  c.userTranscript(t("hello", false));
  c.botOutput(out("Hi.", "completed", "Hi."));
  c.userTranscript(t("hello there", true));
  c.botOutput(out("You said: hello there", "new", ""));
  assert.deepEqual(
    c.timeline().map((e) => e.kind === "user" ? `user:${e.line.text}` : `bot:${e.unit.text}`),
    ["bot:Hi.", "user:hello there", "bot:You said: hello there"],
  );
});

Deno.test("brain actions come as {type, data}; other server messages are kept as they are", () => {
  const c = new Conversation();
  c.serverMessage({ type: "pong", data: { at: 1 } });
  c.serverMessage("hello");
  assert.deepEqual(c.actions, [
    { type: "pong", data: { at: 1 } },
    { type: "(message)", data: "hello" },
  ]);
});

Deno.test("speaking changes set the indicator and are kept in order", () => {
  const c = new Conversation();
  c.speakingChanged("user", true);
  c.speakingChanged("user", false);
  c.speakingChanged("bot", true);
  assert.deepEqual(c.speaking, { user: false, bot: true });
  assert.equal(c.speakingChanges.length, 3);
});

const order = (c: Conversation) =>
  c.timeline().map((e) => e.kind === "user" ? `user:${e.line.text}` : `bot:${e.unit.text}`);

Deno.test("an interrupted reply's cut-off units are listed before the caller's interrupting line", () => {
  // The worker's order on a barge-in: the caller's words over the playing unit, their final
  // text (which decides the barge-in), then every unit of the reply reported cut off, the ones
  // never started among them.
  const c = new Conversation();
  c.userTranscript(t("tell me a story", true));
  c.botOutput(out("Once upon a time.", "new", ""));
  c.botOutput(out("Once upon a time.", "in-progress", "Once upon "));
  c.userTranscript(t("stop", false));
  c.userTranscript(t("stop please", true));
  c.botOutput(out("Once upon a time.", "completed", "Once upon "));
  c.botOutput(out("There was a fox.", "completed", ""));
  c.botOutput(out("The end.", "completed", ""));
  c.botOutput(out("You said: stop please.", "new", ""));
  assert.deepEqual(order(c), [
    "user:tell me a story",
    "bot:Once upon a time.",
    "bot:There was a fox.",
    "bot:The end.",
    "user:stop please",
    "bot:You said: stop please.",
  ]);
  assert.deepEqual(c.bot.map((u) => u.cutOff), [true, true, true, false]);
});

Deno.test("units cut by the call's end stay after the caller line they answer", () => {
  // The reply had not started when the call ended: its units belong after the line they answer.
  const c = new Conversation();
  c.botOutput(out("Hi.", "new", ""));
  c.botOutput(out("Hi.", "completed", "Hi."));
  c.userTranscript(t("tell me a story", true));
  c.botOutput(out("Once upon a time.", "completed", ""));
  assert.deepEqual(order(c), ["bot:Hi.", "user:tell me a story", "bot:Once upon a time."]);
});
