// Small helpers for tests of streaming adapters: a condition coming true, and a synthesis stream
// read whole or to its error.
import type { SynthesisChunk } from "../../media/tts/engine.ts";

/** Polls `cond` every 5 ms; throws naming `what` after `ms`. */
export async function waitFor(cond: () => boolean, what: string, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Reads the stream to its end or its error; returns the chunks read and the error. */
export async function drain(
  stream: AsyncIterable<SynthesisChunk>,
): Promise<{ chunks: SynthesisChunk[]; error: unknown }> {
  const chunks: SynthesisChunk[] = [];
  try {
    for await (const c of stream) chunks.push(c);
    return { chunks, error: undefined };
  } catch (error) {
    return { chunks, error };
  }
}

/** Reads a synthesis stream whole: its chunks, their audio joined, its length and its words. */
export async function collect(stream: AsyncIterable<SynthesisChunk>): Promise<{
  chunks: SynthesisChunk[];
  pcm: Int16Array;
  ms: number;
  words: SynthesisChunk["words"];
}> {
  const chunks: SynthesisChunk[] = [];
  for await (const c of stream) chunks.push(c);
  const pcm = new Int16Array(chunks.reduce((s, c) => s + c.pcm.length, 0));
  let o = 0;
  for (const c of chunks) {
    pcm.set(c.pcm, o);
    o += c.pcm.length;
  }
  return { chunks, pcm, ms: pcm.length / 48, words: chunks.flatMap((c) => c.words) };
}

/**
 * Reads a synthesis stream and aborts it 5 ms after its first chunk, while the next is still
 * awaited (a barge-in). Returns what the stream threw, the chunks read and how long after the
 * abort the stream ended, for a test to judge.
 */
export async function abortAfterFirstChunk(
  synthesize: (signal: AbortSignal) => AsyncIterable<SynthesisChunk>,
  reason: unknown,
): Promise<{ thrown: unknown; got: number; msAfterAbort: number }> {
  const ac = new AbortController();
  let got = 0, thrown: unknown, abortedAt = Infinity;
  try {
    for await (const _ of synthesize(ac.signal)) {
      if (++got === 1) {
        setTimeout(() => {
          abortedAt = Date.now();
          ac.abort(reason);
        }, 5);
      }
    }
  } catch (err) {
    thrown = err;
  }
  return { thrown, got, msAfterAbort: Date.now() - abortedAt };
}
