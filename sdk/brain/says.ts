// The brain's `session.say(...)` requests in flight on one call: each waits for the worker's
// answer (SayStarted or SayRefused) and then for the Heard of its one unit, whose id is the say
// id, and resolves with how it went. The call ending settles whatever is left.
import type { HeardText, SayOutcome } from "./types.ts";

interface Pending {
  turnId: string;
  resolve(outcome: SayOutcome): void;
}

export class Says {
  #n = 0;
  #pending = new Map<string, Pending>();

  /** A new say id and the promise of its outcome. */
  open(): { sayId: string; outcome: Promise<SayOutcome> } {
    const sayId = `say.${++this.#n}`;
    const outcome = new Promise<SayOutcome>((resolve) => {
      this.#pending.set(sayId, { turnId: "", resolve });
    });
    return { sayId, outcome };
  }

  started(sayId: string, turnId: string): void {
    const p = this.#pending.get(sayId);
    if (p) p.turnId = turnId;
  }

  refused(sayId: string, detail: string): void {
    this.#settle(sayId, { turnId: "", heard: "", cutOff: false, refused: detail });
  }

  /** A Heard: settles the say whose unit it is (false when it is no say's). */
  heard(h: HeardText): boolean {
    const p = this.#pending.get(h.unitId);
    if (!p || p.turnId === "" || p.turnId !== h.turnId) return false;
    this.#settle(h.unitId, { turnId: h.turnId, heard: h.text, cutOff: h.cutOff });
    return true;
  }

  /**
   * The call ended: a say in the final list of what was heard settles with it; one not started
   * was never spoken; one started and not in the list was cut off unheard.
   */
  end(finalHeard: readonly HeardText[]): void {
    for (const h of finalHeard) this.heard(h);
    for (const [sayId, p] of this.#pending) {
      this.#settle(
        sayId,
        p.turnId
          ? { turnId: p.turnId, heard: "", cutOff: true }
          : { turnId: "", heard: "", cutOff: false, refused: "the session ended" },
      );
    }
  }

  #settle(sayId: string, outcome: SayOutcome): void {
    const p = this.#pending.get(sayId);
    if (!p) return;
    this.#pending.delete(sayId);
    p.resolve(outcome);
  }
}
