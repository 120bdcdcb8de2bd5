// How `deno task run` reads the stop signals it gets (SIGINT, SIGTERM). One Ctrl-C can arrive
// twice at once: a terminal sends it to the whole process group, `deno task` among it, and
// `deno task` forwards what it gets to its child as well; Deno itself has been seen to run a
// listener twice for one signal (denoland/deno#31540). Taken as a second press, that doubled
// signal once cut a clean stop short with code 130 (CI, 2026-12-02: "stopping" and "stopping at
// once" in the same millisecond). So signals within SAME_PRESS_MS of the first are the same press,
// and only a later one means "stop now".

/** Signals this close to the first are one press: far below a person's second Ctrl-C. */
export const SAME_PRESS_MS = 500;

/** What a stop signal means: the first stops cleanly, a repeat of it is nothing, a later one stops now. */
export type StopSignal = "stop" | "same press" | "stop now";

/** Reads each stop signal by when it came (ms, one clock). */
export class StopSignals {
  #firstAt: number | undefined;

  read(atMs: number): StopSignal {
    if (this.#firstAt === undefined) {
      this.#firstAt = atMs;
      return "stop";
    }
    return atMs - this.#firstAt < SAME_PRESS_MS ? "same press" : "stop now";
  }
}
