// A conversation's three streams open together at call start (the VAD, recognition and the
// brain's socket), so the call waits for the slowest of them, not their sum. When one fails,
// the VAD and recognition that opened are closed; the brain's socket is kept so that it hears
// the call's end (Finalize, End) with the reason.
import type { CallFailure } from "../../common/session_events.ts";
import { dialFailure } from "../brain/connection.ts";

interface Closable {
  close(): unknown;
}

export type Opened<V, S, B> =
  | { ok: true; vad: V; recognition: S; brain: B }
  | { ok: false; brain?: B; reason: CallFailure; detail: string };

/**
 * All three, or why not: a brain that could not be dialled is named by dialFailure, an engine
 * that would not open is `engine_unavailable`. `wanted` says whether the call still is; when it
 * is not, everything that opened is closed and nothing is returned.
 */
export async function openTogether<V extends Closable, S extends Closable, B extends Closable>(
  opening: [Promise<V>, Promise<S>, Promise<B>],
  wanted: () => boolean,
): Promise<Opened<V, S, B> | undefined> {
  const [vad, stt, brain] = await Promise.allSettled(opening);
  const kept = brain.status === "fulfilled" ? brain.value : undefined;
  if (vad.status === "fulfilled" && stt.status === "fulfilled" && kept && wanted()) {
    return { ok: true, vad: vad.value, recognition: stt.value, brain: kept };
  }
  if (vad.status === "fulfilled") vad.value.close();
  if (stt.status === "fulfilled") stt.value.close();
  if (!wanted()) return void await kept?.close();
  const failed = [vad, stt, brain].find((r) => r.status === "rejected") as PromiseRejectedResult;
  const err = failed.reason as Error;
  const reason = brain.status === "rejected" ? dialFailure(err) : "engine_unavailable";
  return { ok: false, brain: kept, reason, detail: err.message };
}
