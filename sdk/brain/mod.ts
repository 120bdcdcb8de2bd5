/**
 * The brain SDK: write the conversational side of a voice call as a few handlers.
 *
 * The service's media worker dials the brain at `{brain_url}?session_id={id}` over a WebSocket
 * and speaks the protobuf frames of `proto/voice/v1/brain.proto`; this module hides them.
 *
 * @example
 * import { createBrain } from "./sdk/brain/mod.ts";
 * const brain = createBrain({
 *   onSessionStart: () => "Hello!",
 *   async *onTurn(turn) { yield `You said: ${turn.text}`; },
 * });
 * console.log(brain.serve({ port: 8790, path: "/brain" }).url);
 * @module
 */
export { type Brain, createBrain, type ServedBrain, type ServeOptions } from "./brain.ts";
export type { ConfigJson, LanguageName, VoiceName } from "./config.ts";
export type {
  Beep,
  BrainHandlers,
  Dtmf,
  HeardText,
  IdleTurn,
  InterimText,
  JsonObject,
  MachineDetected,
  PhoneInfo,
  ReplayInfo,
  Reply,
  RtviMessage,
  SayOutcome,
  Session,
  SessionEndInfo,
  TraceContext,
  TransferFailure,
  TransferOptions,
  Turn,
  TurnMetrics,
  UserSpeech,
  WebSocketLike,
} from "./types.ts";
export { type CollectDigitsOptions, CollectedDigits, type CollectStop } from "./keypad.ts";
export { speechUnits, type UnitOptions, UnitSplitter } from "./units.ts";
