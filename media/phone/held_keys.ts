// A line's key-press emitter that keeps what is pressed before anyone listens: a provider's
// stream can carry keys while its session token is checked and the call is being made, and those
// must reach the call (media/call/key_presses.ts) rather than go nowhere. A few are kept; the
// call's own limiter bounds the rest.
import { Emitter } from "../rtc/emitter.ts";
import type { DtmfDigit } from "./line.ts";

export class HeldKeys extends Emitter<[DtmfDigit]> {
  #held: DtmfDigit[] = [];
  #heard = false;

  constructor(private readonly keep = 20) {
    super();
  }

  /** The first listener gets the held keys at once, in order. */
  override on(listener: (d: DtmfDigit) => void): () => void {
    const off = super.on(listener);
    if (!this.#heard) {
      this.#heard = true;
      for (const d of this.#held.splice(0)) listener(d);
    }
    return off;
  }

  override emit(d: DtmfDigit): void {
    if (this.#heard) return super.emit(d);
    if (this.#held.length < this.keep) this.#held.push(d);
  }
}
