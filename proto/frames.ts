// One wire frame of the brain protocol in each direction: a oneof body plus the per-direction
// sequence number and a send timestamp. Shared by the worker and the brain SDK.
import type protobuf from "protobufjs";
import { BrainFrameType, ServiceFrameType } from "./mod.ts";

export type ServiceFrameKind =
  | "session_start"
  | "user_turn"
  | "client_message"
  | "heard"
  | "user_idle"
  | "finalize"
  | "end"
  | "cancel"
  | "dtmf"
  | "transfer_failed"
  | "say_started"
  | "say_refused"
  | "user_speech"
  | "interim_text"
  | "turn_metrics"
  | "machine_detected"
  | "beep"
  | "turn_confirmed";

export type BrainFrameKind =
  | "greeting"
  | "speech_unit"
  | "action"
  | "config"
  | "end_session"
  | "transfer"
  | "say";

export interface Frame<K extends string> {
  seq: number;
  timestamp_ms: number;
  kind: K;
  // deno-lint-ignore no-explicit-any
  body: Record<string, any>;
}

const TO_OBJECT: protobuf.IConversionOptions = {
  enums: String,
  longs: Number,
  defaults: true,
  oneofs: true,
};

/**
 * Strings made well-formed (a lone surrogate, e.g. text cut mid-emoji, becomes U+FFFD): protobuf
 * would encode it as bytes the other side's UTF-8 decoder refuses, failing the call.
 */
function wellFormed(value: unknown): unknown {
  if (typeof value === "string") return value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, wellFormed(v)]));
  }
  return value;
}

function encode<K extends string>(
  type: protobuf.Type,
  seq: number,
  kind: K,
  body: Record<string, unknown>,
): Uint8Array {
  const message = type.fromObject({ seq, timestamp_ms: Date.now(), [kind]: wellFormed(body) });
  return type.encode(message).finish();
}

function decode<K extends string>(type: protobuf.Type, bytes: Uint8Array): Frame<K> {
  const message = type.decode(bytes);
  const o = type.toObject(message, TO_OBJECT);
  const kind = o.frame as K | undefined;
  if (!kind) throw new Error("frame has no body");
  return { seq: Number(o.seq), timestamp_ms: Number(o.timestamp_ms), kind, body: o[kind] ?? {} };
}

/** A service-to-brain frame, as the worker sends it. */
export const encodeServiceFrame = (
  seq: number,
  kind: ServiceFrameKind,
  body: Record<string, unknown>,
): Uint8Array => encode(ServiceFrameType, seq, kind, body);

/** A brain-to-service frame, as the brain sends it. */
export const encodeBrainFrame = (
  seq: number,
  kind: BrainFrameKind,
  body: Record<string, unknown>,
): Uint8Array => encode(BrainFrameType, seq, kind, body);

/** Decodes a service-to-brain frame; throws on bytes that are not one. */
export const decodeServiceFrame = (bytes: Uint8Array): Frame<ServiceFrameKind> =>
  decode(ServiceFrameType, bytes);

/** Decodes a brain-to-service frame; throws on bytes that are not one. */
export const decodeBrainFrame = (bytes: Uint8Array): Frame<BrainFrameKind> =>
  decode(BrainFrameType, bytes);
