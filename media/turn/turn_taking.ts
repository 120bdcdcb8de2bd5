// Who has the floor, as an explicit state machine. It is fed what the VAD, the recogniser, the
// brain and the speaker report, and answers with what the call must do. It holds no timers and
// does no I/O, so every path (barge-in included) is testable with scripted events.
//
//   listening ──speech──▶ caller_speaking ──silence──▶ end_of_turn ──text──▶ waiting_for_brain
//       ▲                        ▲                          │(no words)            │ first audio
//       │                        └──────speech (barge-in)───┼──────────────────────┤
//       └───────────────── playback done ◀── bot_speaking ◀─┘                      ▼
//
// A slow brain: when a reply's first unit is late (reply_timeout) the floor goes back to the
// caller, but the turn stays current: its units, when they come, are spoken (the turn takes the
// floor again, so barge-in works on it). It is superseded as soon as the caller speaks or idle
// fires: it is cancelled then (the brain gets Cancel) and its late units are dropped, as are
// units of any turn older than the latest one.
export type TurnState =
  | "listening"
  | "caller_speaking"
  | "end_of_turn"
  | "waiting_for_brain"
  | "bot_speaking";

export type TurnEvent =
  /** The greeting is expected from the brain; it holds the floor like any reply. */
  | { type: "greeting_expected" }
  | { type: "speech_started" }
  | { type: "speech_stopped" }
  /** The recogniser's final text for the utterance that just ended. */
  | { type: "final_text"; text: string }
  /** The brain has the floor after silence (idle). */
  | { type: "idle_elapsed" }
  /** A reply's first audio frame went out. */
  | { type: "playback_started"; turnId: string }
  /** A reply played out: its last unit arrived and every frame was sent. */
  | { type: "reply_finished"; turnId: string }
  /** No unit of the awaited reply came in time: the caller gets the floor back. */
  | { type: "reply_timeout"; turnId: string };

export type TurnAction =
  | { type: "start_recognition" }
  | { type: "finish_recognition" }
  | { type: "send_user_turn"; turnId: string; text: string }
  | { type: "send_user_idle"; turnId: string }
  /** Barge-in: stop the bot now, tell the brain, drop the turn's later units. */
  | { type: "interrupt"; turnId: string }
  /** A timed-out turn was superseded before its reply came: tell the brain, drop its units. */
  | { type: "cancel"; turnId: string };

/** Whether a unit of a turn is spoken, or why not. */
export type UnitVerdict = "accepted" | "cancelled" | "superseded";

export class TurnTaking {
  state: TurnState = "listening";
  /** The turn whose reply is awaited or playing. */
  replyTurn?: string;
  /** The turn opened last (greeting, t1, …): the only one whose units may still be spoken. */
  latest?: string;
  /** A turn whose reply timed out and that nothing has superseded yet. */
  late?: string;
  private turns = 0;
  /** Words of an utterance the caller resumed before its text was final. */
  private carried = "";
  private cancelled = new Set<string>();

  /** Whether units of this turn are still wanted (not interrupted). */
  wants(turnId: string): boolean {
    return !this.cancelled.has(turnId);
  }

  /**
   * A unit of `turnId` arrived: whether it is spoken. The latest turn's units are, while the
   * caller does not hold the floor; a turn that timed out (or had played out) takes the floor
   * again with them. Units of a cancelled or an older turn are not.
   */
  accept(turnId: string): UnitVerdict {
    if (this.cancelled.has(turnId)) return "cancelled";
    if (turnId !== this.latest) return "superseded";
    if (turnId === this.replyTurn) return "accepted";
    if (this.state !== "listening") return "superseded"; // the caller is speaking
    this.late = undefined;
    this.replyTurn = turnId;
    this.state = "waiting_for_brain";
    return "accepted";
  }

  /** The timed-out turn, if any, is superseded: it is cancelled. */
  private supersedeLate(out: TurnAction[]): void {
    if (this.late === undefined) return;
    out.push({ type: "cancel", turnId: this.late });
    this.cancelled.add(this.late);
    this.late = undefined;
  }

  private open(turnId: string): void {
    this.latest = turnId;
    this.replyTurn = turnId;
    this.state = "waiting_for_brain";
  }

  next(event: TurnEvent): TurnAction[] {
    const out: TurnAction[] = [];
    switch (event.type) {
      case "greeting_expected":
        this.open("greeting");
        break;
      case "speech_started":
        if (this.state === "caller_speaking") break;
        this.supersedeLate(out);
        if (
          (this.state === "waiting_for_brain" || this.state === "bot_speaking") &&
          this.replyTurn !== undefined
        ) {
          out.push({ type: "interrupt", turnId: this.replyTurn });
          this.cancelled.add(this.replyTurn);
          this.replyTurn = undefined;
        }
        // From end_of_turn the caller resumed: the first part's text is still being finalized
        // and is carried into this utterance's turn when it arrives.
        out.push({ type: "start_recognition" });
        this.state = "caller_speaking";
        break;
      case "speech_stopped":
        if (this.state !== "caller_speaking") break;
        this.state = "end_of_turn";
        out.push({ type: "finish_recognition" });
        break;
      case "final_text": {
        const text = [this.carried, event.text.trim()].filter(Boolean).join(" ");
        if (this.state === "caller_speaking") {
          // The caller spoke again before this text was final: one turn, not two.
          this.carried = text;
          break;
        }
        if (this.state !== "end_of_turn") break;
        this.carried = "";
        if (!text) {
          this.state = "listening";
          break;
        }
        const turnId = `t${++this.turns}`;
        this.open(turnId);
        out.push({ type: "send_user_turn", turnId, text });
        break;
      }
      case "idle_elapsed": {
        if (this.state !== "listening") break;
        this.supersedeLate(out);
        const turnId = `t${++this.turns}`;
        this.open(turnId);
        out.push({ type: "send_user_idle", turnId });
        break;
      }
      case "playback_started":
        if (this.state === "waiting_for_brain" && event.turnId === this.replyTurn) {
          this.state = "bot_speaking";
        }
        break;
      case "reply_finished":
        if (event.turnId !== this.replyTurn) break;
        this.replyTurn = undefined;
        if (this.state === "bot_speaking" || this.state === "waiting_for_brain") {
          this.state = "listening";
        }
        break;
      case "reply_timeout":
        if (event.turnId !== this.replyTurn || this.state !== "waiting_for_brain") break;
        this.replyTurn = undefined;
        this.late = event.turnId;
        this.state = "listening";
        break;
    }
    return out;
  }
}
