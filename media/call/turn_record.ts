// Per-turn timings of a call, as the session record keeps them (docs/session-record.md): marks in
// ms since the turn began, the latency of each step, and what the caller heard of each unit.
export type TurnTrigger = "greeting" | "speech" | "idle";
export type TurnMark =
  | "speech_ended"
  | "final_text"
  | "user_turn_sent"
  | "first_unit"
  | "first_audio"
  | "done";

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
  latency_ms: Partial<
    Record<"recognition" | "to_brain" | "brain" | "synthesis" | "end_to_first_audio", number>
  >;
  units: UnitRecord[];
  interrupted: boolean;
  /** Which engine served each leg of the turn: recognition of the caller, synthesis of the units. */
  engines: { recognition?: string; synthesis: string[] };
}

class Turn {
  readonly marks: Partial<Record<TurnMark, number>> = {};
  readonly units: UnitRecord[] = [];
  interrupted = false;
  userText: string | null = null;
  recognitionEngine?: string;
  constructor(
    readonly id: string,
    readonly trigger: TurnTrigger,
    readonly startedAt: number, // performance.now()
    readonly startedWall: number, // Date.now()
  ) {}

  mark(name: TurnMark, now: number): void {
    this.marks[name] ??= Math.round((now - this.startedAt) * 10) / 10;
  }

  toRecord(): TurnRecord {
    const m = this.marks;
    const span = (a: TurnMark, b: TurnMark) =>
      m[a] !== undefined && m[b] !== undefined ? Math.round((m[b]! - m[a]!) * 10) / 10 : undefined;
    const latency: TurnRecord["latency_ms"] = {};
    const put = (k: keyof TurnRecord["latency_ms"], v: number | undefined) => {
      if (v !== undefined) latency[k] = v;
    };
    put("recognition", span("speech_ended", "final_text"));
    put("to_brain", span("speech_ended", "user_turn_sent"));
    put("brain", span("user_turn_sent", "first_unit"));
    put("synthesis", span("first_unit", "first_audio"));
    put("end_to_first_audio", span("speech_ended", "first_audio"));
    return {
      turn_id: this.id,
      trigger: this.trigger,
      user_text: this.userText,
      started_at: new Date(this.startedWall).toISOString(),
      marks: { ...m },
      latency_ms: latency,
      units: [...this.units],
      interrupted: this.interrupted,
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

  /** The caller started speaking `agoMs` ago (the VAD's start window). */
  utteranceStarted(now: number, agoMs = 0): void {
    this.pending ??= new Turn("", "speech", now - agoMs, Date.now() - agoMs);
  }

  utteranceMark(name: TurnMark, now: number): void {
    this.pending?.mark(name, now);
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
    turn.mark("user_turn_sent", now);
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
    this.byId.get(id)?.mark(name, now);
  }

  unitDone(id: string, unit: UnitRecord): void {
    this.byId.get(id)?.units.push(unit);
  }

  interrupted(id: string): void {
    const t = this.byId.get(id);
    if (t) t.interrupted = true;
  }

  records(): TurnRecord[] {
    return this.turns.map((t) => t.toRecord());
  }
}
