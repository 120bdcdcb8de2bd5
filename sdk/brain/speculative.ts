// Speculative turns (Config.turns.speculative): the worker sends a UserTurn at the caller's short
// pause and later confirms it (TurnConfirmed) or cancels it (Cancel: the caller went on). The
// turn's speech units go out at once, since the worker holds their audio; anything else the brain
// sends from inside such a turn (an action, a transfer, the end, a say, a config, a key collection)
// would act at once, so it is held here until the turn is confirmed and dropped if it is cancelled
// (docs/decisions.md, "Speculative turns in the SDKs"). The turn is found from the async context
// the handler runs in, so a send from a helper, a timer or a closure over the session that the
// handler started is held too. The Python SDK's voice_brain/speculative.py does the same.
import { AsyncLocalStorage } from "node:async_hooks";

/** Why a held send was dropped, as a `say` outcome's `refused` says it (both SDKs alike). */
export const CANCELLED = "its speculative turn was cancelled";

interface Held {
  what: string;
  run: () => void;
  drop?: () => void;
}

/** One speculative turn: whether the worker took it, and what waits for that. */
export class SpeculativeTurn {
  readonly id: string;
  /** True once confirmed, false once cancelled (or the call ended first). */
  readonly confirmed: Promise<boolean>;
  #state: "pending" | "confirmed" | "cancelled" = "pending";
  #held: Held[] = [];
  #resolve!: (taken: boolean) => void;
  readonly #log: (what: string, err?: unknown) => void;
  /** Aborts the turn's signal, its handler over or not (work it started may still watch it). */
  readonly #onCancel: () => void;

  constructor(id: string, log: (what: string, err?: unknown) => void, onCancel: () => void) {
    this.id = id;
    this.#log = log;
    this.#onCancel = onCancel;
    this.confirmed = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** Still waiting for TurnConfirmed or Cancel. */
  get pending(): boolean {
    return this.#state === "pending";
  }

  /** Holds `run` until the turn is confirmed; a cancelled turn drops it at once (and logs it). */
  hold(what: string, run: () => void, drop?: () => void): void {
    if (this.#state === "confirmed") return run();
    if (this.#state === "pending") return void this.#held.push({ what, run, drop });
    this.#log(`dropped ${what}: speculative turn ${this.id} was cancelled`);
    drop?.();
  }

  /** TurnConfirmed: what was held goes out in the order it was asked, then `confirmed` is true. */
  confirm(): void {
    if (this.#state !== "pending") return;
    this.#state = "confirmed";
    for (const { what, run } of this.#take()) {
      try {
        run();
      } catch (err) {
        this.#log(`a held ${what} failed`, err);
      }
    }
    this.#resolve(true);
  }

  /** Cancel (or the call's end): what was held is dropped, and `confirmed` is false. */
  cancel(why = "was cancelled"): void {
    if (this.#state !== "pending") return;
    this.#state = "cancelled";
    const held = this.#take();
    if (held.length > 0) {
      const what = held.map((h) => h.what).join(", ");
      this.#log(`dropped ${what}: speculative turn ${this.id} ${why} before it was confirmed`);
    }
    for (const h of held) h.drop?.();
    this.#onCancel();
    this.#resolve(false);
  }

  #take(): Held[] {
    const held = this.#held;
    this.#held = [];
    return held;
  }
}

const current = new AsyncLocalStorage<SpeculativeTurn>();

/** Runs `fn` (a turn handler and everything it starts) as part of `turn`. */
export function inTurn<T>(turn: SpeculativeTurn | null, fn: () => T): T {
  return turn ? current.run(turn, fn) : fn();
}

/** The speculative turn this code runs in (its send goes through `hold`), or null outside one. */
export function holdingTurn(): SpeculativeTurn | null {
  return current.getStore() ?? null;
}

/** Runs `run` now, or holds it for the speculative turn this code runs in. */
export function act(what: string, run: () => void, drop?: () => void): void {
  const turn = holdingTurn();
  if (turn) turn.hold(what, run, drop);
  else run();
}
