// Speculative turns (Config.turns.speculative; adaptive end of turn only): at the caller's pause,
// once its words are in, they go to the brain at once as a UserTurn marked speculative, while the
// end-of-turn window is still open. The brain answers; the call synthesizes the reply and holds
// it. When the window closes on the same words the turn is confirmed (TurnConfirmed, the held
// reply plays at once); when the caller goes on, or the words change, it is cancelled (Cancel,
// the held reply is dropped unheard) and the words lead the next turn as before. Pure, like the
// machine it serves (turn_taking.ts): it only answers with actions.
import type { TurnAction } from "./turn_events.ts";

/** A speculative turn sent and neither confirmed nor cancelled yet. */
export interface Speculated {
  turnId: string;
  text: string;
}

export class Speculation {
  /** Whether pauses are sent speculatively (the call's config; may change mid-call). */
  on: boolean;
  #pending?: Speculated;

  constructor(on = false) {
    this.on = on;
  }

  /** The speculative turn in flight, if any. */
  get pending(): Speculated | undefined {
    return this.#pending;
  }

  /** Whether units of `turnId` are held: it is the speculative turn in flight. */
  holds(turnId: string): boolean {
    return this.#pending?.turnId === turnId;
  }

  /**
   * The pause's words `text` are in and the turn has not ended: they go now, unless these very
   * words already went (other words first cancel the turn that carried them).
   */
  offer(text: string, nextId: () => string, out: TurnAction[], cancelled: Set<string>): void {
    if (!this.on || !text || this.#pending?.text === text) return;
    this.drop(out, cancelled);
    const turnId = nextId();
    this.#pending = { turnId, text };
    out.push({ type: "send_user_turn", turnId, text, speculative: true });
  }

  /** The caller went on, or the words changed: the brain is told, the held reply dropped. */
  drop(out: TurnAction[], cancelled: Set<string>): void {
    const p = this.#pending;
    if (!p) return;
    this.#pending = undefined;
    cancelled.add(p.turnId);
    out.push({ type: "cancel", turnId: p.turnId, speculative: true });
  }

  /**
   * The window closed on `text`: the speculative turn that carried exactly these words, which
   * the caller takes (undefined: none did, any other is dropped and the words go as a turn).
   */
  take(text: string, out: TurnAction[], cancelled: Set<string>): Speculated | undefined {
    const p = this.#pending;
    if (p && p.text === text) {
      this.#pending = undefined;
      return p;
    }
    this.drop(out, cancelled);
    return undefined;
  }
}
