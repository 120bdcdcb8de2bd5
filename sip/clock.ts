// The clock the SIP timers run on: real timers in the worker and the redirect, a hand-turned one
// in tests, so the RFC 3261 timers (seconds to minutes) are tested in no time and exactly.

export interface SipClock {
  /** Runs `fn` once after `ms`; the handle cancels it. */
  after(ms: number, fn: () => void): { cancel(): void };
}

export const realClock: SipClock = {
  after(ms, fn) {
    const id = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(id) };
  },
};

/** RFC 3261 section 17.1.1.1 and table 4: T1 (RTT estimate), T2 (cap for non-INVITE), T4. */
export interface SipTimers {
  t1: number;
  t2: number;
  t4: number;
}
export const RFC_TIMERS: SipTimers = { t1: 500, t2: 4000, t4: 5000 };
