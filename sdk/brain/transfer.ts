// A warm transfer's fields on the wire (Transfer.whisper, Transfer.ring_timeout_ms), checked
// here so a bad value throws in the brain rather than coming back as a TransferFailed.
import type { TransferOptions } from "./types.ts";

/** The service's bounds for ring_timeout_ms (proto/voice/v1/brain.proto). */
const RING_MIN_MS = 5_000;
const RING_MAX_MS = 120_000;

/** The Transfer body's warm fields; empty for a cold transfer. */
export function warmFields(options: TransferOptions): Record<string, unknown> {
  const { whisper, ringTimeoutMs } = options;
  if (whisper !== undefined && typeof whisper !== "string") {
    throw new Error("session.transfer: whisper must be a string");
  }
  if (
    ringTimeoutMs !== undefined &&
    !(Number.isInteger(ringTimeoutMs) && ringTimeoutMs >= RING_MIN_MS &&
      ringTimeoutMs <= RING_MAX_MS)
  ) {
    throw new Error(
      `session.transfer: ringTimeoutMs must be a whole number from ${RING_MIN_MS} to ${RING_MAX_MS}`,
    );
  }
  const text = whisper?.trim() ?? "";
  if (!text) return {};
  return { whisper: text, ...(ringTimeoutMs ? { ring_timeout_ms: ringTimeoutMs } : {}) };
}
