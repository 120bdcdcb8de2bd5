// What a conversation is given and what it gives back (media/call/conversation.ts).
import type { NoiseSuppression } from "../../common/noise_suppression.ts";
import type { TurnSensitivity } from "../../common/turn_sensitivity.ts";
import type { UsageRecord } from "../engines/routing.ts";
import type { EndOfTurnMode } from "../turn/turn_taking.ts";
import type { RtviEmitter } from "../rtvi/observer.ts";
import type { TransferResult } from "../phone/line.ts";
import type { OutboundGreeting } from "./greeting_gate.ts";
import type { CallConfig } from "./call_config.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import type { ChannelKind } from "../stt/engine.ts";
import type { CallRecording } from "./recording.ts";
import type { SessionLog } from "./session_log.ts";
import type { TurnRecord } from "./turn_record.ts";
import type { WarmRequest } from "./transfer.ts";
import type { CallTrace } from "../trace/tracing.ts";

export interface ConversationOptions {
  sessionId: string;
  agentId: string;
  brainUrl: string;
  /** The session's init object (from the token), sent to the brain as is. */
  init: unknown;
  /** The effective config before the brain speaks: defaults, then the connect config. */
  config: CallConfig;
  engines: CallEngines;
  log: SessionLog;
  /** Where the page's messages go: the call's RTVI session, or a phone call's record of them. */
  rtvi: RtviEmitter;
  /** A phone call: who rang and how (SessionStart's `phone`); absent on a web call. */
  phone?: { from: string; to: string; carrier: string; call_id: string };
  /** The caller's audio: "narrowband" over a phone line, else "wideband" (recognition adapts per kind). */
  channel?: ChannelKind;
  /** Hands the caller on (a phone call's line); absent, the brain's Transfer is refused. */
  transfer?(target: string, warm?: WarmRequest): Promise<TransferResult>;
  recording?: CallRecording;
  /** Ends the call (the conversation's finish() is then called by the call). */
  endCall(status: "ended" | "failed", reason: string): void;
  /** VAD start window while the bot speaks (barge-in), in ms (default: caller_audio.ts). */
  bargeInMs?: number;
  /** The caller's noise suppressor, from the connect config (default DEFAULT_NOISE_SUPPRESSION). */
  noiseSuppression?: NoiseSuppression;
  /** How readily the bot yields and how patiently it waits (common/turn_sensitivity.ts). */
  sensitivity?: Required<TurnSensitivity>;
  /** A call the service placed: when its greeting is spoken (greeting_gate.ts); else at once. */
  outboundGreeting?: OutboundGreeting;
  /** END_OF_TURN: `adaptive` (default) or `fixed`; see media/turn/turn_taking.ts. */
  endOfTurn?: EndOfTurnMode;
  /** How long the brain has to answer SessionStart with a greeting (default: brainLimits). */
  greetingTimeoutMs?: number;
  /** How long the brain has to start a reply to a turn (default: brainLimits). */
  replyTimeoutMs?: number;
  /** The call's trace (media/trace/): SessionStart carries its context; each turn over is traced. */
  trace?: Pick<CallTrace, "traceparent" | "tracestate" | "turnOver" | "engineRequest">;
}

export interface ConversationOutcome extends UsageRecord {
  turns: TurnRecord[];
  /** The reason of the brain's EndSession, when it sent one (the record keeps it, cut). */
  brainEndReason?: string;
}
