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
//
// END_OF_TURN (the mode, default here `fixed` for the machine, `adaptive` for calls):
// - fixed: the VAD ends the utterance after its fixed silence (speech_stopped), and any caller
//   speech over the bot interrupts at once. The bench's baseline.
// - adaptive: the VAD reports a short pause (speech_paused); recognition is finished there,
//   speculatively, and the turn ends once the silence (audio_time) reaches the window the
//   end-of-turn policy computes from the words and this caller's pauses; if the caller resumes
//   first, the words are carried into the same turn. Caller speech over the bot first pauses it
//   (pause_bot); at the caller's pause, words that are only a backchannel or noise resume it
//   (resume_bot, the brain hears nothing), anything else, or speech that goes on past
//   overlapMaxMs, interrupts as in fixed mode and becomes the next turn.
//
// TYPED TURNS (the page's RTVI send-text): the caller chose to send the text, so it is a turn at
// once, never a backchannel: a reply awaited or playing is interrupted (adaptive mode too), a
// timed-out turn is cancelled, and the text goes to the brain marked typed. While the caller holds
// the floor (speaking, paused, or their words being finalized) the typed text waits, and goes as
// its own turn as soon as the floor is settled: after that utterance's turn is sent (whose reply
// it then supersedes, as a caller speaking again would) or dropped. A typed turn's words are
// never carried into a later spoken turn.
//
// SPECULATIVE TURNS (adaptive, while `speculative` is on; speculative.ts): a pause's words go to
// the brain as soon as they are in, marked speculative, and its units are held (verdict "held")
// until the window closes on those words (confirm_turn) or the caller goes on (cancel; the words
// are carried as above). The reply timer starts at confirmation: a held turn never times out.
import { EndOfTurnPolicy } from "./end_of_turn.ts";
import { BargeInRules } from "./barge_in.ts";
import type { ProsodyCues } from "./prosody.ts";
import { Speculation } from "./speculative.ts";
import type {
  EndOfTurnMode,
  TurnAction,
  TurnEvent,
  TurnState,
  TurnTakingOptions,
  UnitVerdict,
} from "./turn_events.ts";

export type {
  EndOfTurnMode,
  TurnAction,
  TurnEvent,
  TurnState,
  TurnTakingOptions,
  UnitVerdict,
} from "./turn_events.ts";

/** What the adaptive machine knows of a pause in progress. */
interface Pause {
  silenceStartMs: number;
  /** The words so far (carried ones included), once recognition has finished. */
  text?: string;
  /** The VAD already ended the utterance (its upper bound): end as soon as the text is in. */
  vadEnded: boolean;
  /** The caller's voice before the pause. */
  prosody?: ProsodyCues;
}

export class TurnTaking {
  state: TurnState = "listening";
  /** The turn whose reply is awaited or playing. */
  replyTurn?: string;
  /** The turn opened last (greeting, t1, …): the only one whose units may still be spoken. */
  latest?: string;
  /** A turn whose reply timed out and that nothing has superseded yet. */
  late?: string;
  readonly mode: EndOfTurnMode;
  readonly policy: EndOfTurnPolicy;
  /** When speech over the bot stops it (barge_in.ts). */
  readonly bargeIn: BargeInRules;
  private turns = 0;
  /** Words of an utterance the caller resumed before its text was final. */
  private carried = "";
  private cancelled = new Set<string>();
  /** Adaptive: the pause in progress (state caller_paused). */
  private pause?: Pause;
  /** Adaptive: the bot's turn held while the caller speaks over it, and since when. */
  private overlap?: { turnId: string; onsetMs: number };
  /** Adaptive: the text of the last user turn sent, while its reply has not begun playing. */
  private lastSent?: { turnId: string; text: string };
  /** Latest audio time seen. */
  private clockMs = 0;
  /** Typed turns that came while the caller held the floor, in order. */
  private typedWaiting: string[] = [];
  /** Adaptive: the speculative turn of the pause in progress (speculative.ts). */
  private readonly speculation: Speculation;

  constructor(options: TurnTakingOptions = {}) {
    this.mode = options.mode ?? "fixed";
    this.policy = options.policy ?? new EndOfTurnPolicy(options.language ?? "en");
    this.bargeIn = new BargeInRules(options);
    this.speculation = new Speculation(options.speculative ?? false);
  }

  /** Whether a pause's words go to the brain before the window closes (adaptive mode only). */
  get speculative(): boolean {
    return this.speculation.on;
  }

  set speculative(on: boolean) {
    this.speculation.on = on;
  }

  /** Speech over the bot this long after its onset takes the floor (barge_in.ts). */
  get overlapMaxMs(): number {
    return this.bargeIn.overlapMaxMs;
  }

  /** The caller's language (the lexicon and windows follow it). */
  set language(language: string) {
    this.policy.language = language;
  }

  /** Whether the machine wants audio_time events now (a pause or an overlap in progress). */
  get needsClock(): boolean {
    return this.pause !== undefined || this.overlap !== undefined;
  }

  /** Adaptive: the bot's turn the caller is speaking over, if any. */
  get overlapping(): string | undefined {
    return this.overlap?.turnId;
  }

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
    if (this.speculation.holds(turnId)) return "held";
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

  private nextId(): string {
    return `t${++this.turns}`;
  }

  private sendTurn(out: TurnAction[], text: string): void {
    const turnId = this.nextId();
    this.open(turnId);
    if (this.mode === "adaptive") this.lastSent = { turnId, text };
    out.push({ type: "send_user_turn", turnId, text });
  }

  /** A typed turn: whatever the bot is saying or about to say is interrupted; the text goes. */
  private sendTyped(out: TurnAction[], text: string): void {
    this.supersedeLate(out);
    if (
      (this.state === "waiting_for_brain" || this.state === "bot_speaking") &&
      this.replyTurn !== undefined
    ) {
      out.push({ type: "interrupt", turnId: this.replyTurn, typed: true });
      this.cancelled.add(this.replyTurn);
    }
    // Typed words are never carried into the caller's next spoken turn.
    this.lastSent = undefined;
    const turnId = this.nextId();
    this.open(turnId);
    out.push({ type: "send_user_turn", turnId, text, typed: true });
  }

  /** Whether nobody but the bot holds the floor: a typed turn can go now. */
  private get floorSettled(): boolean {
    return this.overlap === undefined && this.pause === undefined &&
      (this.state === "listening" || this.state === "waiting_for_brain" ||
        this.state === "bot_speaking");
  }

  /** The pause is over and the caller speaks on: its words (if in) lead the same turn. */
  private resumeFromPause(out: TurnAction[], pauseMs: number | undefined): void {
    const p = this.pause!;
    this.pause = undefined;
    // A reply to the words so far is dropped unheard: they lead the next turn, with the rest.
    this.speculation.drop(out, this.cancelled);
    if (pauseMs !== undefined) this.policy.observePause(pauseMs, p.text);
    // Words not in yet are carried when they come (final_text while caller_speaking).
    if (p.text !== undefined) this.carried = p.text;
    this.state = "caller_speaking";
    out.push({ type: "start_recognition" });
  }

  private shouldEnd(): boolean {
    const p = this.pause!;
    if (p.text === undefined) return false;
    return p.vadEnded || this.silenceMs(p) >= this.policy.windowMs(p.text, p.prosody);
  }

  private endTurn(out: TurnAction[]): void {
    const p = this.pause!;
    const text = p.text ?? "";
    this.pause = undefined;
    out.push({
      type: "end_utterance",
      vadOpen: !p.vadEnded,
      words: text !== "",
      silenceMs: this.silenceMs(p),
      windowMs: this.policy.windowMs(text, p.prosody),
    });
    const held = this.speculation.take(text, out, this.cancelled);
    if (held) {
      // The brain has had these words since the pause: its reply, held until now, plays.
      this.open(held.turnId);
      this.lastSent = { turnId: held.turnId, text };
      out.push({ type: "confirm_turn", turnId: held.turnId });
    } else if (!text) this.state = "listening";
    else this.sendTurn(out, text);
  }

  /** The pause's words are in and the window still open: they may go to the brain now. */
  private speculate(out: TurnAction[]): void {
    const p = this.pause;
    if (!this.speculation.on || this.mode !== "adaptive" || !p || p.text === undefined) return;
    if (this.overlap) return;
    if (this.silenceMs(p) < this.policy.speculateAtMs(p.text)) return; // a later tick sends them
    this.speculation.offer(p.text, () => this.nextId(), out, this.cancelled);
  }

  private silenceMs(p: Pause): number {
    return this.clockMs - p.silenceStartMs;
  }

  /**
   * The overlap's pause, once its words are in: words are judged at once; no words (a cough, a
   * knock, a breath) keep the bot held until the silence reaches the window of an empty turn, so
   * a caller who goes on after a noise never hears the bot come back between the two.
   */
  private judgeOverlap(out: TurnAction[]): void {
    const p = this.pause!;
    if (p.text === undefined) return;
    if (p.text !== "") return this.settleOverlap(out, p.text);
    if (p.vadEnded || this.silenceMs(p) >= this.policy.windowMs("")) this.settleOverlap(out, "");
  }

  /** The caller's words over the bot are in: a backchannel resumes it, anything else cuts it. */
  private settleOverlap(out: TurnAction[], text: string): void {
    const o = this.overlap!;
    if (!this.bargeIn.playsOn(text, this.policy.language)) return this.interruptOverlap(out);
    const p = this.pause!;
    this.overlap = undefined;
    this.pause = undefined;
    out.push({
      type: "end_utterance",
      vadOpen: !p.vadEnded,
      words: false,
      silenceMs: this.silenceMs(p),
      windowMs: 0,
    });
    out.push({ type: "resume_bot", turnId: o.turnId, text });
    // The reply may have played out just before the pause took hold.
    this.state = this.replyTurn === o.turnId ? "bot_speaking" : "listening";
  }

  private interruptOverlap(out: TurnAction[]): void {
    const turnId = this.overlap!.turnId;
    this.overlap = undefined;
    if (this.replyTurn !== turnId) {
      // It played out just as the caller began: nothing to cancel, but the speaker is held.
      out.push({ type: "resume_bot", turnId, text: "" });
      return;
    }
    out.push({ type: "interrupt", turnId });
    this.cancelled.add(turnId);
    if (this.replyTurn === turnId) this.replyTurn = undefined;
  }

  /** A Say takes a free floor as a turn of its own; otherwise it is refused and nothing changes. */
  private say({ sayId, text }: { sayId: string; text: string }, out: TurnAction[]): void {
    if (this.state !== "listening") {
      const detail = this.state === "bot_speaking" || this.state === "waiting_for_brain"
        ? `the bot holds the floor (turn ${this.replyTurn})`
        : "the caller holds the floor";
      return void out.push({ type: "refuse_say", sayId, detail });
    }
    this.supersedeLate(out);
    const turnId = this.nextId();
    this.open(turnId);
    out.push({ type: "open_say", turnId, sayId, text });
  }

  next(event: TurnEvent): TurnAction[] {
    const out: TurnAction[] = [];
    this.step(event, out);
    // Typed turns held while the caller spoke go once the floor is settled.
    while (this.typedWaiting.length > 0 && this.floorSettled) {
      this.sendTyped(out, this.typedWaiting.shift()!);
    }
    return out;
  }

  private step(event: TurnEvent, out: TurnAction[]): void {
    switch (event.type) {
      case "typed_text": {
        const text = event.text.trim();
        if (text) this.typedWaiting.push(text);
        break;
      }
      case "greeting_expected":
        this.open("greeting");
        break;
      case "speech_started":
        if (this.state === "caller_speaking") break;
        if (this.state === "caller_paused") {
          // A new utterance while the last one's end is pending: the caller went on.
          this.resumeFromPause(out, undefined);
          break;
        }
        this.supersedeLate(out);
        if (
          this.mode === "adaptive" && this.state === "bot_speaking" &&
          this.replyTurn !== undefined
        ) {
          // Maybe a backchannel: hold the bot's audio and listen before cancelling anything.
          this.overlap = { turnId: this.replyTurn, onsetMs: event.onsetMs ?? this.clockMs };
          out.push({ type: "pause_bot", turnId: this.replyTurn });
          out.push({ type: "start_recognition" });
          this.state = "caller_speaking";
          break;
        }
        if (
          this.mode === "adaptive" && this.state === "waiting_for_brain" &&
          this.lastSent?.turnId === this.replyTurn
        ) {
          // The caller went on before the reply began: the turn sent too early is cancelled and
          // its words lead the next one, so the brain gets the whole utterance.
          this.carried = [this.lastSent!.text, this.carried].filter(Boolean).join(" ");
        }
        this.lastSent = undefined;
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
        if (this.state === "caller_paused") {
          // The VAD's upper bound: the turn ends now, or as soon as its words are in.
          this.pause!.vadEnded = true;
          if (this.overlap) this.judgeOverlap(out);
          else if (this.pause!.text !== undefined) this.endTurn(out);
          break;
        }
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
        if (this.state === "caller_paused") {
          this.carried = "";
          this.pause!.text = text;
          // Words spoken over the bot are judged, never sent speculatively.
          const overBot = this.overlap !== undefined;
          if (this.overlap) this.judgeOverlap(out);
          // An interruption leaves the pause open: the words may already end the new turn.
          if (!this.overlap && this.pause && this.shouldEnd()) this.endTurn(out);
          else if (!overBot) this.speculate(out);
          break;
        }
        if (this.state !== "end_of_turn") break;
        this.carried = "";
        if (!text) {
          this.state = "listening";
          break;
        }
        this.sendTurn(out, text);
        break;
      }
      case "speech_paused":
        if (this.mode !== "adaptive" || this.state !== "caller_speaking") break;
        this.clockMs = Math.max(this.clockMs, event.atMs);
        this.state = "caller_paused";
        this.pause = {
          silenceStartMs: event.silenceStartMs,
          vadEnded: false,
          prosody: event.prosody,
        };
        // Speculative: the words come back in tens of ms, long before the window closes.
        out.push({ type: "finish_recognition" });
        break;
      case "speech_resumed":
        if (this.state !== "caller_paused") break;
        this.resumeFromPause(out, event.pauseMs);
        break;
      case "audio_time":
        this.clockMs = Math.max(this.clockMs, event.atMs);
        if (this.state === "caller_paused" && this.overlap) {
          this.judgeOverlap(out);
        } else if (this.state === "caller_paused" && this.shouldEnd()) {
          this.endTurn(out);
        } else if (this.state === "caller_paused") {
          this.speculate(out); // words that hang wait for half their window (speculateAtMs)
        } else if (
          this.state === "caller_speaking" && this.overlap &&
          this.bargeIn.takesFloor(this.clockMs - this.overlap.onsetMs)
        ) {
          // Backchannels are short: this caller is taking the floor.
          this.interruptOverlap(out);
        }
        break;
      case "idle_elapsed": {
        if (this.state !== "listening") break;
        this.supersedeLate(out);
        const turnId = this.nextId();
        this.open(turnId);
        out.push({ type: "send_user_idle", turnId });
        break;
      }
      case "say_requested":
        this.say(event, out);
        break;
      case "playback_started":
        if (this.state === "waiting_for_brain" && event.turnId === this.replyTurn) {
          this.state = "bot_speaking";
          this.lastSent = undefined;
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
  }
}
