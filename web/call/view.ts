/// <reference lib="dom" />
// Renders a Conversation into the page: the interleaved caller/bot timeline, who is speaking and
// the brain's actions. Text goes in through textContent only: it comes from the caller's speech
// and the brain, never markup.
import type { BotUnit, Conversation, TranscriptLine } from "./conversation.ts";
import type { PickerOption } from "./voice_choice.ts";
import type { LatencyLog } from "./latency.ts";
import type { CallPhase } from "./call.ts";

/** The call's phase in words: "ready" is the call in progress, not a page waiting to call. */
export const PHASE_WORDS: Record<CallPhase, string> = {
  idle: "idle",
  requesting: "asking for a call",
  refused: "refused",
  connecting: "connecting",
  ready: "in a call",
  ended: "ended",
  failed: "failed",
};

function el(tag: string, className: string, text?: string): HTMLElement {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function userLine(line: TranscriptLine): HTMLElement {
  const li = el("li", `user ${line.final ? "final" : "interim"}${line.typed ? " typed" : ""}`);
  li.append(el("span", "who", "You"), el("span", "text", line.text));
  if (line.typed) li.append(el("span", "how", " (typed)"));
  return li;
}

function botLine(unit: BotUnit): HTMLElement {
  const li = el("li", `bot ${unit.status}${unit.cutOff ? " cut-off" : ""}`);
  const text = el("span", "text");
  // Heard so far, then the rest: still to come while playing, struck through once cut off.
  if (unit.heard) text.append(el("span", "heard", unit.heard));
  if (unit.remaining) text.append(el("span", unit.cutOff ? "unheard" : "pending", unit.remaining));
  li.append(el("span", "who", "Bot"), text);
  return li;
}

export function renderConversation(c: Conversation, into: HTMLElement): void {
  const atBottom = into.scrollTop + into.clientHeight >= into.scrollHeight - 8;
  into.replaceChildren(
    ...c.timeline().map((e) => e.kind === "user" ? userLine(e.line) : botLine(e.unit)),
  );
  if (atBottom) into.scrollTop = into.scrollHeight;
}

export function renderSpeaking(c: Conversation, user: HTMLElement, bot: HTMLElement): void {
  user.classList.toggle("on", c.speaking.user);
  bot.classList.toggle("on", c.speaking.bot);
}

export function renderActions(c: Conversation, into: HTMLElement): void {
  into.replaceChildren(
    ...c.actions.map((a) => {
      const li = el("li", "action");
      li.append(el("code", "type", a.type), el("span", "data", JSON.stringify(a.data)));
      return li;
    }),
  );
}

/** Fills a <select> with labelled options and selects `selected`. */
export function fillSelect(
  select: HTMLSelectElement,
  options: PickerOption[],
  selected: string,
): void {
  select.replaceChildren(
    ...options.map(({ value, label }) => {
      const o = document.createElement("option");
      o.value = value;
      o.textContent = label;
      o.selected = value === selected;
      return o;
    }),
  );
  select.disabled = options.length === 0;
}

/** The page's own end-of-speech-to-first-audio figures, one line per turn, and their median. */
export function renderLatency(log: LatencyLog, into: HTMLElement, median: HTMLElement): void {
  into.replaceChildren(...log.lines().map((line) => el("li", "latency", line)));
  const m = log.median();
  median.textContent = m === null ? "–" : `${Math.round(m)} ms`;
}
