// Per-turn timings of a call, as the session record keeps them (docs/session-record.md): marks in
// ms since the turn began, the latency of each step, and what the caller heard of each unit.
export type TurnTrigger = "greeting" | "speech" | "idle" | "typed" | "say";
export type TurnMark =
  /** The caller's speech ended: the start of the silence that ended the turn, from the audio. */
  | "speech_ended"
  /** The worker decided the turn was over (the end-of-turn window closed, or the VAD's). */
  | "end_of_turn"
  /** The recogniser was asked for the final text of the turn's last stretch of speech. */
  | "final_requested"
  /** ... and gave it. */
  | "final_text"
  /** A typed turn's text reached the worker (it may wait while the caller holds the floor). */
  | "typed_text"
  | "user_turn_sent"
  | "first_unit"
  /** A speculative turn: its reply's first audio was synthesized (held until confirmed). */
  | "audio_ready"
  | "first_audio"
  | "done";

export type LatencyStep =
  | "end_of_turn"
  | "to_brain"
  | "brain"
  | "synthesis"
  | "end_to_first_audio"
  /** The recogniser's own time for the final text; it runs inside end_of_turn or to_brain. */
  | "recognition"
  /** Reported by the page or caller simulator: end of speech to first bot audio as heard there. */
  | "heard_at_caller"
  /** A typed turn's wait: its text reached the worker to the first bot audio sent. */
  | "typed_to_first_audio"
  /**
   * A speculative turn: its end of turn (the window closed, the turn confirmed) to its first
   * audio sent. Near 0 when the brain and synthesis were done while the window was open.
   */
  | "release";

/** Typed texts remembered while they wait to become turns; more are never waiting at once. */
const MAX_TYPED_WAITING = 8;

/** The largest caller-reported latency kept (ms); anything longer is not a reply being waited for. */
export const MAX_HEARD_AT_CALLER_MS = 60_000;

/**
 * Each latency of the record: the span between two marks. The first four are a chain from the
 * caller's end of speech to the first audio sent, so each is >= 0 and they add up to
 * end_to_first_audio; recognition overlaps the chain (adaptive end of turn recognises during the
 * silence, the fixed one after it).
 */
export const STEPS: readonly (readonly [LatencyStep, TurnMark, TurnMark])[] = [
  ["end_of_turn", "speech_ended", "end_of_turn"],
  ["to_brain", "end_of_turn", "user_turn_sent"],
  ["brain", "user_turn_sent", "first_unit"],
  ["synthesis", "first_unit", "first_audio"],
  ["end_to_first_audio", "speech_ended", "first_audio"],
  ["recognition", "final_requested", "final_text"],
  ["typed_to_first_audio", "typed_text", "first_audio"],
];

/**
 * A speculative turn's: the brain and synthesis ran while the window was open, so the chain is
 * end_of_turn + release = end_to_first_audio, and brain and synthesis (to the held audio being
 * ready) overlap it; to_brain is not there (the turn went before its end).
 */
export const SPECULATIVE_STEPS: readonly (readonly [LatencyStep, TurnMark, TurnMark])[] = [
  ["end_of_turn", "speech_ended", "end_of_turn"],
  ["release", "end_of_turn", "first_audio"],
  ["brain", "user_turn_sent", "first_unit"],
  ["synthesis", "first_unit", "audio_ready"],
  ["end_to_first_audio", "speech_ended", "first_audio"],
  ["recognition", "final_requested", "final_text"],
];

/** The steps of a turn's record: a speculative turn's differ (SPECULATIVE_STEPS). */
export const stepsOf = (speculative: boolean | undefined) =>
  speculative ? SPECULATIVE_STEPS : STEPS;

/**
 * Told as a turn's figures become known (the node's metrics listen): each latency once, when the
 * later of its two marks is set, and each turn the caller cut off, once.
 */
export interface TurnObserver {
  latency(step: LatencyStep, ms: number): void;
  interrupted(): void;
}

export interface UnitRecord {
  unit_id: string;
  text: string;
  heard: string;
  cut_off: boolean;
  /** The synthesis engine that spoke it (absent when cut before any audio). */
  engine?: string;
  /** `heard` rests on estimated word timings (the engine gives none). */
  heard_estimated?: boolean;
}

export interface TurnRecord {
  turn_id: string;
  trigger: TurnTrigger;
  user_text: string | null;
  started_at: string;
  marks: Partial<Record<TurnMark, number>>;
  latency_ms: Partial<Record<LatencyStep, number>>;
  units: UnitRecord[];
  interrupted: boolean;
  /** Sent to the brain at the caller's pause, before its end of turn (SPECULATIVE_STEPS). */
  speculative?: true;
  /** Which engine served each leg of the turn: recognition of the caller, synthesis of the units. */
  engines: { recognition?: string; synthesis: string[] };
}

class Turn {
  readonly marks: Partial<Record<TurnMark, number>> = {};
  readonly units: UnitRecord[] = [];
  interrupted = false;
  userText: string | null = null;
  recognitionEngine?: string;
  /** End of speech to first bot audio as the caller measured it (the page reports it). */
  heardAtCaller?: number;
  /** Sent speculatively; `held` until confirmed (no figures are told before). */
  speculative = false;
  held = false;
  constructor(
    readonly id: string,
    readonly trigger: TurnTrigger,
    readonly startedAt: number, // performance.now()
    readonly startedWall: number, // Date.now()
  ) {}

  /** Sets the mark unless it is set; tells `observer` the latencies it completes. */
  mark(name: TurnMark, now: number, observer?: TurnObserver): void {
    if (this.marks[name] !== undefined) return;
    this.set(name, now);
    if (!observer) return;
    for (const [step, from, to] of stepsOf(this.speculative)) {
      const ms = to === name ? this.span(from, to) : undefined;
      if (ms !== undefined) observer.latency(step, ms);
    }
  }

  /** Sets the mark, the last time winning (an utterance's marks until it becomes a turn). */
  set(name: TurnMark, now: number): void {
    this.marks[name] = Math.round((now - this.startedAt) * 10) / 10;
  }

  /** Tells `observer` every latency whose two marks are set. */
  report(observer?: TurnObserver): void {
    for (const [step, from, to] of stepsOf(this.speculative)) {
      const ms = this.span(from, to);
      if (ms !== undefined) observer?.latency(step, ms);
    }
  }

  private span(a: TurnMark, b: TurnMark): number | undefined {
    const m = this.marks;
    return m[a] !== undefined && m[b] !== undefined
      ? Math.round((m[b]! - m[a]!) * 10) / 10
      : undefined;
  }

  toRecord(): TurnRecord {
    const m = this.marks;
    const latency: TurnRecord["latency_ms"] = {};
    for (const [step, from, to] of stepsOf(this.speculative)) {
      const ms = this.span(from, to);
      if (ms !== undefined) latency[step] = ms;
    }
    if (this.heardAtCaller !== undefined) latency.heard_at_caller = this.heardAtCaller;
    return {
      turn_id: this.id,
      trigger: this.trigger,
      user_text: this.userText,
      started_at: new Date(this.startedWall).toISOString(),
      marks: { ...m },
      latency_ms: latency,
      units: [...this.units],
      interrupted: this.interrupted,
      ...(this.speculative ? { speculative: true as const } : {}),
      engines: {
        ...(this.recognitionEngine ? { recognition: this.recognitionEngine } : {}),
        synthesis: [...new Set(this.units.flatMap((u) => u.engine ? [u.engine] : []))],
      },
    };
  }
}

/** The turns of one call. A speech turn opens at the caller's onset, before its id is known. */
export class TurnLog {
  private turns: Turn[] = [];
  private byId = new Map<string, Turn>();
  /** The caller's utterance in progress, not yet a turn with an id. */
  private pending?: Turn;
  /** Told each latency and barge-in as it happens (the node's metrics); set by the call. */
  observer?: TurnObserver;
  /** Typed texts that arrived and are not yet turns, oldest first (typedArrived). */
  private typedWaiting: { text: string; at: number; wall: number }[] = [];

  /** The caller started speaking `agoMs` ago (the VAD's start window). */
  utteranceStarted(now: number, agoMs = 0): void {
    this.pending ??= new Turn("", "speech", now - agoMs, Date.now() - agoMs);
  }

  /**
   * A mark of the utterance in progress. The last one wins (a caller who pauses and goes on has
   * their speech end, and their words finalized, more than once), and nothing is reported until
   * the utterance becomes a turn: an utterance without words has no latency.
   */
  utteranceMark(name: TurnMark, now: number): void {
    this.pending?.set(name, now);
  }

  /** The engine that recognised the utterance in progress. */
  utteranceRecognisedBy(engine: string): void {
    if (this.pending) this.pending.recognitionEngine = engine;
  }

  /** The utterance became turn `id` with `text`, sent now. */
  utteranceSent(id: string, text: string, now: number): void {
    const base = this.pending ?? new Turn(id, "speech", now, Date.now());
    this.pending = undefined;
    const turn = new Turn(id, "speech", base.startedAt, base.startedWall);
    Object.assign(turn.marks, base.marks);
    turn.recognitionEngine = base.recognitionEngine;
    turn.userText = text;
    turn.set("user_turn_sent", now);
    turn.report(this.observer);
    this.add(turn);
  }

  /**
   * The utterance so far went as speculative turn `id` with `text`: the turn exists for its units'
   * marks, but is none of the call's (records, figures) until confirmed. The utterance stays in
   * progress: the caller may go on.
   */
  utteranceSpeculated(id: string, text: string, now: number): void {
    const base = this.pending ?? new Turn(id, "speech", now, Date.now());
    this.pending ??= base;
    const turn = new Turn(id, "speech", base.startedAt, base.startedWall);
    turn.userText = text;
    turn.speculative = turn.held = true;
    turn.set("user_turn_sent", now);
    this.byId.set(id, turn);
  }

  /** The speculative turn's window closed: the utterance's end is its end; it is a turn now. */
  utteranceConfirmed(id: string, _now: number): void {
    const turn = this.byId.get(id);
    if (!turn?.held) return;
    const base = this.pending;
    this.pending = undefined;
    for (const name of ["speech_ended", "end_of_turn", "final_requested", "final_text"] as const) {
      const at = base?.marks[name];
      if (at !== undefined) turn.marks[name] = at;
    }
    turn.recognitionEngine = base?.recognitionEngine;
    turn.held = false;
    this.turns.push(turn);
    turn.report(this.observer);
  }

  /** The caller went on: the speculative turn is no turn of the call. */
  speculationDropped(id: string): void {
    if (this.byId.get(id)?.held) this.byId.delete(id);
  }

  /**
   * A typed text reached the worker at `now`; the turn it becomes (typedSent) begins here. Kept
   * by text, since the caller's utterance in progress may hold it back (turn_taking.ts); at most
   * MAX_TYPED_WAITING, as a text refused before it became a turn is never claimed.
   */
  typedArrived(text: string, now: number): void {
    this.typedWaiting.push({ text: text.trim(), at: now, wall: Date.now() });
    if (this.typedWaiting.length > MAX_TYPED_WAITING) this.typedWaiting.shift();
  }

  /**
   * A typed turn `id`, sent now: it begins when its text arrived (no speech, so no end-of-turn or
   * recognition), and its wait is typed_to_first_audio.
   */
  typedSent(id: string, text: string, now: number): void {
    const i = this.typedWaiting.findIndex((w) => w.text === text);
    const arrived = i >= 0 ? this.typedWaiting.splice(i, 1)[0] : { at: now, wall: Date.now() };
    const turn = new Turn(id, "typed", arrived.at, arrived.wall);
    turn.userText = text;
    turn.mark("typed_text", arrived.at, this.observer);
    turn.mark("user_turn_sent", now, this.observer);
    this.add(turn);
  }

  /** An utterance with no words: no turn. */
  utteranceDropped(): void {
    this.pending = undefined;
  }

  open(id: string, trigger: TurnTrigger, now: number): void {
    this.add(new Turn(id, trigger, now, Date.now()));
  }

  private add(turn: Turn): void {
    this.turns.push(turn);
    this.byId.set(turn.id, turn);
  }

  mark(id: string, name: TurnMark, now: number): void {
    const turn = this.byId.get(id);
    turn?.mark(name, now, turn.held ? undefined : this.observer);
  }

  unitDone(id: string, unit: UnitRecord): void {
    this.byId.get(id)?.units.push(unit);
  }

  interrupted(id: string): void {
    const t = this.byId.get(id);
    if (!t || t.interrupted) return;
    t.interrupted = true;
    this.observer?.interrupted();
  }

  /**
   * The caller's own figure for a speech turn (`"latest"`: the last speech turn), end of its
   * speech to the first bot audio it heard. Kept once per turn, and only for a turn whose reply
   * has begun playing (the caller cannot have heard one before): a later report, one for a
   * greeting or idle turn, an unknown turn or a value outside 0..MAX_HEARD_AT_CALLER_MS is not
   * kept. Returns whether it was.
   */
  heardAtCaller(turnId: string, ms: number): boolean {
    if (typeof ms !== "number" || !(ms >= 0 && ms <= MAX_HEARD_AT_CALLER_MS)) return false;
    const turn = turnId === "latest"
      ? this.turns.findLast((t) => t.trigger === "speech")
      : this.byId.get(turnId);
    if (!turn || turn.trigger !== "speech" || turn.marks.first_audio === undefined) return false;
    if (turn.heardAtCaller !== undefined) return false;
    turn.heardAtCaller = Math.round(ms * 10) / 10;
    this.observer?.latency("heard_at_caller", turn.heardAtCaller);
    return true;
  }

  /** One turn's record as it stands (undefined: no such turn). */
  record(id: string): TurnRecord | undefined {
    return this.byId.get(id)?.toRecord();
  }

  records(): TurnRecord[] {
    return this.turns.map((t) => t.toRecord());
  }
}
