// What the page shows of a call, built from the RTVI events the client emits: the caller's
// transcript, the bot's output with the part the caller heard, who is speaking, and the actions
// the brain dispatched. Plain data, so the page renders it and tests read it from `window`.
import type { BotOutputData, TranscriptData } from "@pipecat-ai/client-js";

export interface TranscriptLine {
  /** Arrival order shared with bot units, so the page can interleave them. */
  seq: number;
  text: string;
  /** false while recognition may still change it (shown grey); the final replaces it. */
  final: boolean;
  /** The caller typed it (the worker's echo of a send-text this page sent). */
  typed?: boolean;
}

export interface BotUnit {
  seq: number;
  text: string;
  /** What the caller has heard of it so far (`spoken_progress.accumulated_text`). */
  heard: string;
  /** What has not been heard (yet, or ever once `cutOff`). */
  remaining: string;
  status: "new" | "in-progress" | "completed";
  /** Completed with text left unheard: the caller interrupted or the call ended. */
  cutOff: boolean;
  segmentId?: number;
}

export interface Action {
  type: string;
  data: unknown;
}

export type Speaker = "user" | "bot";

export interface SpeakingChange {
  who: Speaker;
  speaking: boolean;
}

export class Conversation {
  transcript: TranscriptLine[] = [];
  bot: BotUnit[] = [];
  actions: Action[] = [];
  speaking: Record<Speaker, boolean> = { user: false, bot: false };
  /** Every speaking change, oldest first (the indicator shows the latest state). */
  speakingChanges: SpeakingChange[] = [];
  private seq = 0;
  /** Caller lines that began while a bot unit was playing: the ones that can cut a reply. */
  private overBot = new WeakSet<TranscriptLine>();
  /** Spoken lines the latency list has named a figure by (lastSpoken). */
  private claimed = new WeakSet<TranscriptLine>();
  /** Texts this page typed whose echo has not come back yet (trimmed, as the worker sends them). */
  private typing: string[] = [];

  /** The caller typed `text`: its echo, a final transcript, will be shown as typed. */
  typed(text: string): void {
    this.typing.push(text.trim());
  }

  userTranscript(d: TranscriptData): void {
    const i = d.final ? this.typing.indexOf(d.text) : -1;
    if (i >= 0) {
      // The echo of a typed turn: a line of its own; a grey interim of speech stays as it is.
      this.typing.splice(i, 1);
      const line = { seq: this.seq++, text: d.text, final: true, typed: true };
      if (this.bot.some((u) => u.status !== "completed")) this.overBot.add(line);
      this.transcript.push(line);
      return;
    }
    // An interim is replaced by the next interim or by its final, in the same place (a typed
    // line's echo may have come after it).
    const open = this.transcript.findLast((line) => !line.final);
    if (open) Object.assign(open, { text: d.text, final: d.final });
    else {
      const line = { seq: this.seq++, text: d.text, final: d.final };
      if (this.bot.some((u) => u.status !== "completed")) this.overBot.add(line);
      this.transcript.push(line);
    }
  }

  botOutput(d: BotOutputData): void {
    const status = d.spoken_status;
    const progress = d.spoken_progress;
    if (!status) {
      // A server without speech progress: the unit is shown whole, with nothing marked heard.
      this.bot.push({
        seq: this.seq++,
        text: d.text,
        heard: "",
        remaining: d.text,
        status: "new",
        cutOff: false,
      });
      return;
    }
    let unit = status === "new" ? undefined : this.openUnit(d);
    if (!unit) {
      unit = {
        seq: this.unitSeq(status, progress?.accumulated_text ?? ""),
        text: d.text,
        heard: "",
        remaining: d.text,
        status,
        cutOff: false,
      };
      if (d.segment_id !== undefined) unit.segmentId = d.segment_id;
      this.bot.push(unit);
    }
    unit.status = status;
    if (progress) {
      unit.heard = progress.accumulated_text;
      unit.remaining = progress.remaining_text;
    } else if (status === "completed") {
      unit.heard = d.text;
      unit.remaining = "";
    }
    unit.cutOff = status === "completed" && unit.remaining.trim() !== "";
  }

  /**
   * Where a unit first seen now goes. A unit that arrives already completed with nothing heard
   * never started: it was queued behind the one playing when the caller cut in, and the service
   * reports it only when it acts on the interruption, after the caller's interrupting line (the
   * final text decides a barge-in). It belongs to the reply that line cut, so it is placed just
   * before that line (same seq; bot units sort first on a tie). When the latest caller line did
   * not begin over the bot (the call ended, or the cut came before any words), it goes last.
   */
  private unitSeq(status: BotUnit["status"], heard: string): number {
    const line = this.transcript.at(-1);
    const neverStarted = status === "completed" && heard === "";
    if (neverStarted && line && this.overBot.has(line)) return line.seq;
    return this.seq++;
  }

  /** Caller lines and bot units in the order they began (a unit before a line on a tie). */
  timeline(): ({ kind: "user"; line: TranscriptLine } | { kind: "bot"; unit: BotUnit })[] {
    const key = (e: { kind: "user"; line: TranscriptLine } | { kind: "bot"; unit: BotUnit }) =>
      e.kind === "user" ? e.line.seq + 0.5 : e.unit.seq;
    // Array.prototype.sort is stable: units on one seq keep their arrival order.
    return [
      ...this.transcript.map((line) => ({ kind: "user" as const, line })),
      ...this.bot.map((unit) => ({ kind: "bot" as const, unit })),
    ].sort((a, b) => key(a) - key(b));
  }

  /**
   * The words of the latest spoken turn not yet claimed (`claim`: the latency list takes it),
   * or "" when none is new: a reply to sound that was not recognised as words.
   */
  lastSpoken(claim = false): string {
    const line = this.transcript.findLast((l) => l.final && !l.typed && l.text.trim() !== "");
    if (!line || this.claimed.has(line)) return "";
    if (claim) this.claimed.add(line);
    return line.text;
  }

  speakingChanged(who: Speaker, speaking: boolean): void {
    this.speaking[who] = speaking;
    this.speakingChanges.push({ who, speaking });
  }

  /** A `server-message`; the service sends the brain's actions as `{type, data}`. */
  serverMessage(message: unknown): void {
    const m = message as { type?: unknown; data?: unknown } | null;
    if (m && typeof m === "object" && typeof m.type === "string") {
      this.actions.push({ type: m.type, data: m.data ?? null });
    } else {
      this.actions.push({ type: "(message)", data: message });
    }
  }

  /** The unit a progress message is about: by segment id, else the latest open one with its text. */
  private openUnit(d: BotOutputData): BotUnit | undefined {
    for (let i = this.bot.length - 1; i >= 0; i--) {
      const u = this.bot[i];
      if (u.status === "completed") continue;
      if (d.segment_id !== undefined ? u.segmentId === d.segment_id : u.text === d.text) return u;
    }
    return undefined;
  }
}
