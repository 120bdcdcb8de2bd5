// A scenario's expect_reply (caller/scenario.ts): the bot's units since the caller's last act
// match a pattern. By default (`until: finished`) the step is met as a person would take it: the
// bot has finished speaking (bot-stopped-speaking, then no bot event for SETTLE_MS, then no bot
// audio at the caller for AUDIO_QUIET_MS), and what the caller heard of those units matches; only
// then may the next step talk. `until: started` is met as soon as the units that started playing
// read as the pattern, for a next step that talks over the reply (an interrupt). A say, wav or
// type step also waits for the bot to finish first (`finished`); an interrupt is the one act that
// talks over it. Units are the
// ones whose audio started (caller/bot_speech.ts): a unit dropped unheard on a barge-in never
// counts.
import type { TestCaller } from "./caller.ts";
import { BotSpeech, joined } from "./bot_speech.ts";
import { isBotEvent, isRtvi, type Stop, type Watch } from "./message_watch.ts";
import type { Step } from "./scenario.ts";

/** Quiet after bot-stopped-speaking that ends a reply (as caller/simulator.ts's settle). */
export const SETTLE_MS = 600;
/** How long no received frame may be louder than the bot level before the reply is over. */
export const AUDIO_QUIET_MS = 200;
/** The most that waiting for the last frames to play costs. */
const AUDIO_WAIT_MS = 2000;

export type ReplyOutcome = { kind: "met" } | { kind: "unmet"; message: string } | Stop;

const isSpeaking = (m: { label?: string; type: string }) =>
  isRtvi("bot-started-speaking")(m) || isRtvi("bot-stopped-speaking")(m);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ReplyWatch {
  /** Messages before this index are behind the scenario: replies are looked for after it. */
  from = 0;

  constructor(
    private watch: Watch,
    readonly speech: BotSpeech,
    private caller: TestCaller,
    /** The longest the bot may go without a bot event while it speaks (ms), as the simulator. */
    private gapMs: number,
  ) {}

  async expect(step: Step & { kind: "expect_reply" }, deadline: number): Promise<ReplyOutcome> {
    const start = this.from;
    let units = this.speech.since(start);
    for (let i = start; !step.pattern.test(joined(units, "text"));) {
      const hit = await this.watch.next(i, isRtvi("bot-output"), deadline);
      if (hit.kind === "timeout") {
        const said = joined(units, "text");
        return { kind: "unmet", message: `the bot said ${said ? `"${said}"` : "nothing"}` };
      }
      if (hit.kind !== "match") return hit;
      i = hit.index + 1;
      units = this.speech.since(start);
    }
    // A next expect_reply looks past the unit that completed this match.
    this.from = units.at(-1)!.startedAt + 1;
    if (step.until === "started") return { kind: "met" };
    // `within_ms` bounds the reply's coming; a long reply may take longer to play.
    const end = await this.finished();
    if (end.kind !== "met") return end;
    const said = joined(units, "text"), heard = joined(units, "heard");
    if (step.pattern.test(heard) || units.some((u) => u.doneAt === null)) return { kind: "met" };
    return {
      kind: "unmet",
      message: `the bot said "${said}" but the caller heard only "${heard}"`,
    };
  }

  /**
   * Until the bot has finished speaking and its last audio has reached the caller: at once when
   * it stopped SETTLE_MS ago or never spoke. Unmet when, speaking, it sends no bot event (a unit
   * starting or ending, words going out) for `gapMs`.
   */
  async finished(): Promise<ReplyOutcome> {
    const seen = this.watch.seen;
    let i = seen.length;
    const last = seen.findLast((e) => isSpeaking(e.msg));
    let stopped = last === undefined || isRtvi("bot-stopped-speaking")(last.msg);
    let since = stopped ? last?.at ?? -Infinity : performance.now();
    for (;;) {
      const hit = await this.watch.next(i, isBotEvent, since + (stopped ? SETTLE_MS : this.gapMs));
      if (hit.kind === "timeout") {
        if (stopped) break;
        return {
          kind: "unmet",
          message: `the bot did not finish speaking: no bot event for ${this.gapMs / 1000} s`,
        };
      }
      // The bot hanging up after its words ends the reply; expect_end judges the end.
      if (hit.kind === "hangup") return { kind: "met" };
      if (hit.kind !== "match") return hit;
      i = hit.index + 1;
      since = hit.at;
      if (isRtvi("bot-stopped-speaking")(hit.msg)) stopped = true;
      else if (isRtvi("bot-started-speaking")(hit.msg)) stopped = false;
    }
    const limit = performance.now() + AUDIO_WAIT_MS;
    while (performance.now() < limit) {
      if (this.caller.frames.firstAudio(performance.now() - AUDIO_QUIET_MS) === null) break;
      await sleep(50);
    }
    return { kind: "met" };
  }
}
