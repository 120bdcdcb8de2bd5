import { assertEquals } from "../tests/helpers/assert.ts";
import { insideWindow, isTimeZone, localTime, nextOpening } from "./calling_window.ts";

const WINDOW = { start: "09:00", end: "21:00" };

Deno.test("a calling window is read in the contact's own time zone", () => {
  // 16:00 UTC is 21:30 in Kolkata (+05:30) and 11:00 in New York (EST).
  const at = new Date("2026-01-15T16:00:00Z");
  assertEquals(localTime(at, "Asia/Kolkata"), "21:30");
  assertEquals(insideWindow(at, "Asia/Kolkata", WINDOW), false);
  assertEquals(insideWindow(at, "America/New_York", WINDOW), true);
  // The end is exclusive, the start inclusive.
  assertEquals(insideWindow(new Date("2026-01-15T15:30:00Z"), "Asia/Kolkata", WINDOW), false);
  assertEquals(insideWindow(new Date("2026-01-15T03:30:00Z"), "Asia/Kolkata", WINDOW), true);
});

Deno.test("the next opening is 09:00 local, today or tomorrow", () => {
  assertEquals(
    nextOpening(new Date("2026-01-15T16:00:00Z"), "Asia/Kolkata", WINDOW).toISOString(),
    "2026-01-16T03:30:00.000Z",
  );
  // 02:00 local: today's 09:00.
  assertEquals(
    nextOpening(new Date("2026-01-14T20:30:00Z"), "Asia/Kolkata", WINDOW).toISOString(),
    "2026-01-15T03:30:00.000Z",
  );
  // Across a month end, and on the day New York moves to daylight time (2026-03-08).
  assertEquals(
    nextOpening(new Date("2026-01-31T18:00:00Z"), "Asia/Kolkata", WINDOW).toISOString(),
    "2026-02-01T03:30:00.000Z",
  );
  assertEquals(
    nextOpening(new Date("2026-03-08T04:00:00Z"), "America/New_York", WINDOW).toISOString(),
    "2026-03-08T13:00:00.000Z",
  );
});

Deno.test("only zones Intl knows are time zones", () => {
  assertEquals(isTimeZone("Asia/Kolkata"), true);
  assertEquals(isTimeZone("Mars/Olympus"), false);
});
