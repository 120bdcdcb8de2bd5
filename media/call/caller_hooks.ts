// What the caller's audio asks of the call (media/caller_audio/ CallerHooks): the page and the
// brain told of the caller's speech, turns and idles sent to the brain with their reply timers,
// the bot paused, resumed or cut off (barge-in), the brain's Say played, a deaf call failed.
import { logger } from "../../common/log.ts";
import type { CallFailure } from "../../common/session_events.ts";
import type { ServiceFrameKind } from "../../proto/frames.ts";
import type { CallerHooks } from "../caller_audio/caller_audio.ts";
import type { RtviObserver } from "../rtvi/observer.ts";
import type { IdleStage } from "../turn/idle.ts";
import type { BotVoice } from "./bot_voice.ts";
import type { BrainEvents } from "./brain_events.ts";
import { sayUnitId } from "./say.ts";
import type { SessionLog } from "./session_log.ts";
import type { TurnLog } from "./turn_record.ts";

const log = logger("conversation");
const now = () => performance.now();

/** The parts of a conversation the caller's hooks reach (conversation.ts). */
export interface CallerSide {
  sessionId: string;
  log: SessionLog;
  page: RtviObserver;
  events: BrainEvents;
  voice: BotVoice;
  idle: IdleStage;
  turnLog: TurnLog;
  /** A frame to the brain, once it is up. */
  toBrain(kind: ServiceFrameKind, body: Record<string, unknown>): void;
  /** A turn this service opened: units for it are wanted. */
  issue(turnId: string): void;
  armReplyTimer(turnId: string): void;
  clearReplyTimer(turnId: string): void;
  /** A unit of the bot's speech for a turn, accepted or dropped. */
  unit(turnId: string, unitId: string, text: string, last: boolean): void;
  /** A turn played out or was cut off. */
  turnOver(turnId: string): void;
  fail(reason: CallFailure, detail: string): void;
}

export function callerHooks(c: CallerSide): CallerHooks {
  return {
    onSpeechStarted: () => {
      c.page.userStartedSpeaking();
      c.events.speechStarted(c.voice.busy);
    },
    onSpeechStopped: () => {
      c.page.userStoppedSpeaking();
      c.events.speechStopped();
    },
    onInterimText: (text) => {
      c.page.userTranscription(text, false);
      c.events.interim(text);
    },
    onFinalText: (text) => c.page.userTranscription(text, true),
    onActivity: () => c.idle.activity(),
    onFloorChanged: () => c.idle.check(),
    onUserTurn: (turnId, text, typed, speculative) => {
      c.issue(turnId);
      // The page shows a typed turn in its transcript as it does a spoken one (docs/decisions.md).
      if (typed) c.page.userTranscription(text, true);
      if (!speculative) {
        c.toBrain("user_turn", { turn_id: turnId, text, typed });
        return c.armReplyTimer(turnId);
      }
      // The caller only paused: the reply is held, and its timer waits for the confirmation.
      c.voice.hold(turnId);
      c.toBrain("user_turn", { turn_id: turnId, text, typed, speculative: true });
      c.log.add("worker", "turn_speculative", { turn_id: turnId });
    },
    onTurnConfirmed: (turnId) => {
      c.toBrain("turn_confirmed", { turn_id: turnId });
      const units = c.voice.release(turnId);
      c.log.add("worker", "turn_confirmed", { turn_id: turnId, units });
      if (units === 0) c.armReplyTimer(turnId);
    },
    onSpeculationDropped: (turnId) => {
      const units = c.voice.discard(turnId);
      c.toBrain("cancel", { turn_id: turnId });
      c.log.add("worker", "speculation_dropped", { turn_id: turnId, units });
    },
    onUserIdle: (turnId) => {
      c.issue(turnId);
      c.turnLog.open(turnId, "idle", now());
      c.turnLog.mark(turnId, "user_turn_sent", now());
      c.toBrain("user_idle", { idle_ms: c.idle.quietMs, turn_id: turnId });
      c.idle.activity();
      c.armReplyTimer(turnId);
    },
    pauseBot: (turnId, windowMs) => c.voice.pause(turnId, windowMs),
    resumeBot: (turnId, text) => c.voice.resume(turnId, text),
    interruptBot: (turnId, windowMs, typed) => {
      // Barge-in: the bot stops at the next frame, the brain is told, later units are dropped.
      c.voice.cut(turnId);
      c.clearReplyTimer(turnId);
      c.toBrain("cancel", { turn_id: turnId });
      const how = typed ? { typed: true } : { window_ms: windowMs };
      c.log.add("worker", "barge_in", { turn_id: turnId, ...how });
      c.turnOver(turnId);
    },
    cancelTurn: (turnId) => {
      c.clearReplyTimer(turnId);
      c.toBrain("cancel", { turn_id: turnId });
      c.log.add("worker", "turn_cancelled", { turn_id: turnId, reason: "superseded" });
    },
    onSay: (turnId, sayId, text) => {
      c.issue(turnId);
      c.turnLog.open(turnId, "say", now());
      c.toBrain("say_started", { say_id: sayId, turn_id: turnId });
      c.unit(turnId, sayUnitId(sayId, turnId), text, true);
    },
    onSayRefused: (sayId, detail) => c.toBrain("say_refused", { say_id: sayId, detail }),
    onRecognitionFailed: (err) => {
      // Every engine of the route failed, the last one opened afresh too: the call is deaf.
      log.error("recognition failed", { session_id: c.sessionId, cause: err.message });
      c.fail("recognition_failed", err.message);
    },
    onVadFailed: (err) => {
      // Without the VAD no turn starts or ends, and barge-in is gone: the call cannot go on.
      log.error("vad failed", { session_id: c.sessionId, cause: err.message });
      c.fail("vad_failed", err.message);
    },
  };
}
