// A campaign's calling window: local wall-clock hours (HH:MM, start inclusive, end exclusive) read
// in each contact's own IANA time zone with Intl, so a DST change or a half-hour zone needs no
// table of our own.

export interface CallingWindow {
  /** HH:MM, 00:00-23:59. */
  start: string;
  /** HH:MM, after start (a window does not cross midnight). */
  end: string;
}

export const WINDOW_TIME = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

const formats = new Map<string, Intl.DateTimeFormat>();

function format(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formats.set(timeZone, f);
  }
  return f;
}

/** True when Intl knows the zone (an IANA name such as Asia/Kolkata, or UTC). */
export function isTimeZone(timeZone: string): boolean {
  try {
    format(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wall(at: Date, timeZone: string): Wall {
  const parts: Record<string, number> = {};
  for (const p of format(timeZone).formatToParts(at)) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    hour: parts.hour,
    minute: parts.minute,
    second: parts.second,
  };
}

/** The local time of `at` in `timeZone`, as HH:MM. */
export function localTime(at: Date, timeZone: string): string {
  const w = wall(at, timeZone);
  return `${String(w.hour).padStart(2, "0")}:${String(w.minute).padStart(2, "0")}`;
}

export function insideWindow(at: Date, timeZone: string, window: CallingWindow): boolean {
  const t = localTime(at, timeZone);
  return t >= window.start && t < window.end;
}

/** The instant the wall clock of `timeZone` reads y-m-d h:mi (the later one's offset in a gap). */
function instantOf(y: number, m: number, d: number, h: number, mi: number, timeZone: string) {
  const target = Date.UTC(y, m - 1, d, h, mi);
  let guess = target;
  // Two corrections: the zone's offset at the guess, then at the corrected guess (DST edges).
  for (let i = 0; i < 2; i++) {
    const w = wall(new Date(guess), timeZone);
    guess += target - Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  }
  return new Date(guess);
}

/**
 * When the window next opens after `at` in `timeZone`: today's start when it is still ahead,
 * otherwise tomorrow's. (`at` inside the window: tomorrow's, which callers do not ask for.)
 */
export function nextOpening(at: Date, timeZone: string, window: CallingWindow): Date {
  const w = wall(at, timeZone);
  const [h, mi] = window.start.split(":").map(Number);
  const startsToday = localTime(at, timeZone) < window.start;
  return instantOf(w.year, w.month, w.day + (startsToday ? 0 : 1), h, mi, timeZone);
}
