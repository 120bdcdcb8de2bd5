// What the demo page exposes on window.callPage, read as plain data, and a fake microphone that
// says one line: shared by the demo page's tests.
import type { Page } from "playwright-core";
import { speechWav } from "../../helpers/audio.ts";
import type { CallState } from "../../../web/call/call.ts";
import type {
  Action,
  BotUnit,
  SpeakingChange,
  TranscriptLine,
} from "../../../web/call/conversation.ts";
import type { HeardLatency } from "../../../web/call/latency.ts";

export interface CallPageSnapshot {
  state?: CallState;
  transcript: TranscriptLine[];
  bot: BotUnit[];
  actions: Action[];
  speakingChanges: SpeakingChange[];
  /** "How long you waited": one entry per turn. */
  latency: HeardLatency[];
}

export function snapshotCallPage(page: Page): Promise<CallPageSnapshot> {
  return page.evaluate(() => {
    const p = (globalThis as unknown as {
      callPage: {
        call?: { state: CallState };
        conversation: Omit<CallPageSnapshot, "state" | "latency">;
        latency: { turns: HeardLatency[] };
      };
    }).callPage;
    const c = p.conversation;
    return JSON.parse(JSON.stringify({
      state: p.call?.state,
      transcript: c.transcript,
      bot: c.bot,
      actions: c.actions,
      speakingChanges: c.speakingChanges,
      latency: p.latency.turns,
    }));
  });
}

/**
 * `text` spoken (festival, as tests/helpers/audio.ts says it) with `before` and `after` seconds of
 * silence, as a WAV for Chromium's fake microphone, which loops it: turns must end.
 */
export async function spokenMicWav(text: string, before: number, after: number): Promise<string> {
  const speech = await speechWav(text, 0.3);
  const out = await Deno.makeTempFile({ prefix: "demo-mic-", suffix: ".wav" });
  const sox = await new Deno.Command("sox", {
    args: [speech, out, "pad", String(before), String(after)],
  }).output();
  if (!sox.success) throw new Error(new TextDecoder().decode(sox.stderr));
  return out;
}
