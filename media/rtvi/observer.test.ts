// The call's events as the page gets them: every RTVI message the call sends about its speech
// is shaped here, and only here.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { RtviObserver } from "./observer.ts";

function observer() {
  const sent: { type: string; data?: unknown }[] = [];
  const page = new RtviObserver({
    emit: (type, data) => {
      sent.push(data === undefined ? { type } : { type, data });
      return true;
    },
  }, () => new Date("2026-01-02T03:04:05.000Z"));
  return { page, sent };
}

Deno.test("the caller's speech reaches the page as RTVI user events with timestamped transcripts", () => {
  const { page, sent } = observer();
  page.userStartedSpeaking();
  page.userTranscription("book a", false);
  page.userStoppedSpeaking();
  page.userTranscription("book a table", true);
  const at = "2026-01-02T03:04:05.000Z";
  assertEquals(sent, [
    { type: "user-started-speaking" },
    {
      type: "user-transcription",
      data: { text: "book a", final: false, timestamp: at, user_id: "" },
    },
    { type: "user-stopped-speaking" },
    {
      type: "user-transcription",
      data: { text: "book a table", final: true, timestamp: at, user_id: "" },
    },
  ]);
});

Deno.test("the bot's speech reaches the page with what was heard and what remains", () => {
  const { page, sent } = observer();
  page.botStartedSpeaking();
  page.botOutput("Hello there.", "Hello", "in-progress");
  page.botStoppedSpeaking();
  assertEquals(sent, [
    { type: "bot-started-speaking" },
    {
      type: "bot-output",
      data: {
        text: "Hello there.",
        aggregated_by: "sentence",
        will_be_spoken: true,
        spoken_status: "in-progress",
        spoken_progress: { accumulated_text: "Hello", remaining_text: " there." },
      },
    },
    { type: "bot-stopped-speaking" },
  ]);
});

Deno.test("errors and brain actions reach the page as error and server-message", () => {
  const { page, sent } = observer();
  page.error("the brain is slow", false);
  page.error("the brain closed the socket (1006)", true);
  page.serverMessage("open-url", { url: "https://example.com" });
  assertEquals(sent, [
    {
      type: "error",
      data: { error: "the brain is slow", message: "the brain is slow", fatal: false },
    },
    {
      type: "error",
      data: {
        error: "the brain closed the socket (1006)",
        message: "the brain closed the socket (1006)",
        fatal: true,
      },
    },
    { type: "server-message", data: { type: "open-url", data: { url: "https://example.com" } } },
  ]);
});
