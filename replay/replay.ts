// Replays a recording's caller events against a brain, speaking the worker's side of the brain
// protocol straight over the WebSocket (proto/frames.ts): no audio, no recogniser, no worker.
// The worker's part is played as a worker would: the recorded session start (under a session id
// of its own, marked as a replay of the recorded one), each caller event once the brain has gone
// quiet after the previous one, every unit reported heard whole (a cancelled turn's units stop
// being heard), and at the end Finalize, End and a close that waits for the brain's.
import { type BrainFrameKind, decodeBrainFrame, encodeServiceFrame } from "../proto/frames.ts";
import { type Answer, answerOf, type CallerEvent, type Recording } from "./recording.ts";

/** How long the close waits for the brain's own close frame, as the worker's does (ms). */
const CLOSE_WAIT_MS = 1000;

export interface ReplayOptions {
  /** The brain's WebSocket URL; `?session_id=` is added as the worker does. */
  brainUrl: string;
  /** Quiet that ends an exchange once the brain has answered (ms). Default 1500. */
  settleMs?: number;
  /** Longest wait for a brain's first answer to an event the recording answered (ms). */
  timeoutMs?: number;
  /** Told the replay's session id once the brain's socket is open. */
  onStart?: (sessionId: string) => void;
}

/**
 * A replay's own session id: the recording's id, then `-replay-` and 8 random hex digits, so a
 * brain keying its records by session never mixes a replay into the real call, and a reader sees
 * which call it replays.
 */
export function replaySessionId(original: string): string {
  return `${original}-replay-${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

export interface Replayed {
  /** The session id the brain was given (replaySessionId of the recording's). */
  sessionId: string;
  /** answers[0]: after the session start; answers[i]: after events[i - 1]. */
  answers: Answer[][];
  /** How many of the recording's events were sent (fewer when the brain ended the session). */
  sent: number;
  /** A protocol failure or the brain closing, if that cut the replay short. */
  problem: string | null;
}

export async function replay(rec: Recording, o: ReplayOptions): Promise<Replayed> {
  const settleMs = o.settleMs ?? 1500, timeoutMs = o.timeoutMs ?? 20_000;
  const sessionId = replaySessionId(rec.sessionId);
  const url = new URL(o.brainUrl);
  url.searchParams.set("session_id", sessionId);
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve(), { once: true });
    ws.addEventListener("error", () => reject(new Error(`cannot reach the brain at ${url}`)), {
      once: true,
    });
  });
  o.onStart?.(sessionId);
  const answers: Answer[][] = [[]];
  const heard: Record<string, unknown>[] = [];
  const cancelled = new Set<string>();
  const unitsOfTurn = new Map<string, number>();
  let problem: string | null = null;
  let lastFrameAt = performance.now();
  let wake = () => {};
  let seq = 0;
  const send = (kind: Parameters<typeof encodeServiceFrame>[1], body: Record<string, unknown>) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(encodeServiceFrame(++seq, kind, body));
  };
  ws.addEventListener("message", (e) => {
    lastFrameAt = performance.now();
    if (typeof e.data === "string") {
      problem = "the brain sent a text frame; frames are binary protobuf";
      return wake();
    }
    let frame;
    try {
      frame = decodeBrainFrame(new Uint8Array(e.data as ArrayBuffer));
    } catch (err) {
      problem = `undecodable frame: ${(err as Error).message}`;
      return wake();
    }
    const a = answerOf(frame.kind as BrainFrameKind, frame.body);
    if (a) answers[answers.length - 1].push(a);
    if (a?.kind === "unit") {
      unitsOfTurn.set(a.turn_id, (unitsOfTurn.get(a.turn_id) ?? 0) + 1);
      if (!cancelled.has(a.turn_id)) {
        // Heard whole: the replay has no audio to cut it short.
        const h = {
          unit_id: frame.kind === "greeting" ? "greeting" : String(frame.body.unit_id ?? ""),
          turn_id: a.turn_id,
          text: a.text,
          cut_off: false,
        };
        heard.push(h);
        send("heard", h);
      }
    }
    wake();
  });
  let closing = false;
  const closed = new Promise<void>((resolve) =>
    ws.addEventListener("close", () => {
      if (!closing) problem ??= "the brain closed the socket";
      wake();
      resolve();
    })
  );

  /** Until the exchange is over: quiet after an answer, or `ready()` says the next may go. */
  const settle = async (expectAnswer: boolean, ready: () => boolean) => {
    const started = performance.now();
    for (;;) {
      const got = answers[answers.length - 1].length > 0;
      if (problem || answers.at(-1)!.some((a) => a.kind === "end") || ready()) return;
      const now = performance.now();
      const quietFor = now - Math.max(lastFrameAt, started);
      if ((got || !expectAnswer) && quietFor >= settleMs) return;
      if (!got && expectAnswer && now - started >= timeoutMs) return;
      await new Promise<void>((r) => {
        const t = setTimeout(r, 50);
        wake = () => (clearTimeout(t), r());
      });
    }
  };

  // Marked (SessionStart.replay) so that the brain can keep its side effects out of real systems.
  send("session_start", {
    ...rec.start,
    session_id: sessionId,
    replay: { original_session_id: rec.sessionId },
  });
  let sent = 0;
  const ended = () => answers.flat().some((a) => a.kind === "end");
  for (let i = 0; i <= rec.events.length; i++) {
    const next: CallerEvent | undefined = rec.events[i];
    // A cancel goes once the turn's brain has sent as many units as it had in the recording.
    const ready = next?.kind === "cancel"
      ? () => (unitsOfTurn.get(next.body.turn_id) ?? 0) >= next.afterUnits
      : () => false;
    await settle(rec.answers[i]?.length > 0, ready);
    if (!next || problem || ended()) break;
    answers.push([]);
    if (next.kind === "cancel") cancelled.add(next.body.turn_id);
    send(next.kind, next.body);
    sent++;
  }
  // As a live worker ends a call (media/call/conversation.ts finish): Finalize, End with the
  // worker's reason, then a close that waits, briefly, for the brain's. Returning earlier let
  // the CLI exit with the frames unsent: the brain saw its socket drop ("disconnected").
  const reason = ended() ? "brain_ended" : rec.endReason || "replay_done";
  send("finalize", { heard });
  send("end", { reason });
  closing = true;
  if (ws.readyState === WebSocket.OPEN) ws.close(1000, "call ended");
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([closed, new Promise<void>((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
  clearTimeout(timer);
  return { sessionId, answers, sent, problem: ended() ? null : problem };
}
