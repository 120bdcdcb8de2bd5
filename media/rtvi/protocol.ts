// RTVI 2.1.0 on the client's "chat" data channel: one JSON text frame per message, labelled
// "rtvi-ai" (browser-client-protocol.md §3).
export const RTVI_LABEL = "rtvi-ai";
export const RTVI_VERSION = "2.1.0";

export interface RtviMessage {
  label: typeof RTVI_LABEL;
  type: string;
  id?: string;
  data?: unknown;
}

/** What arrived on the chat channel, sorted before any RTVI handling. */
export type Inbound =
  | { kind: "ping" }
  | { kind: "signalling"; message: { type?: string; receiver_index?: number; enabled?: boolean } }
  | { kind: "rtvi"; message: RtviMessage }
  | { kind: "junk"; reason: string };

/** Classifies one chat frame: keep-alive text, signalling JSON, RTVI, or something else. */
export function classify(text: string): Inbound {
  if (text.startsWith("ping")) return { kind: "ping" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "junk", reason: "not JSON" };
  }
  if (typeof value !== "object" || value === null) return { kind: "junk", reason: "not an object" };
  const v = value as Record<string, unknown>;
  if (v.type === "signalling" && typeof v.message === "object" && v.message !== null) {
    return { kind: "signalling", message: v.message as { type?: string } };
  }
  if (v.label === RTVI_LABEL && typeof v.type === "string") {
    return {
      kind: "rtvi",
      message: {
        label: RTVI_LABEL,
        type: v.type,
        id: typeof v.id === "string" ? v.id : undefined,
        data: v.data,
      },
    };
  }
  return { kind: "junk", reason: "not an RTVI message" };
}

/** One outbound RTVI frame; `id` and `data` are left out when absent (no nulls). */
export function rtvi(type: string, data?: unknown, id?: string): string {
  const m: Record<string, unknown> = { label: RTVI_LABEL, type };
  if (id !== undefined) m.id = id;
  if (data !== undefined) m.data = data;
  return JSON.stringify(m);
}

export function signalling(type: "peerLeft" | "renegotiate"): string {
  return JSON.stringify({ type: "signalling", message: { type } });
}

export const ABOUT = { library: "voice-call-service", library_version: "0.1.0" };
