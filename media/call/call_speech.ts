// The speech engines as one call uses them: recognition opened for the call's channel, synthesis
// in its voice, both counted in its usage (the session's record), and an engine's fallback to the
// next of its route logged (the call goes on).
import { logger } from "../../common/log.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import { CallUsage, type Fallback, type RoutedChunk } from "../engines/routing.ts";
import type { ChannelKind } from "../stt/engine.ts";
import type { SessionLog } from "./session_log.ts";
import type { EngineRequest } from "../trace/tracing.ts";

const log = logger("conversation");

export class CallSpeech {
  readonly usage = new CallUsage();

  constructor(
    private readonly engines: CallEngines,
    private readonly call: {
      sessionId: string;
      log: SessionLog;
      channel?: ChannelKind;
      /** A traced call: each synthesis request is told when it ends (media/trace/). */
      trace?: { engineRequest(r: EngineRequest): void };
    },
  ) {}

  openRecognition(language: string) {
    const { recognition } = this.engines;
    return recognition.open(language, this.onFallback, this.usage, this.call.channel);
  }

  synthesize(text: string, tts: { voice: string; language: string }, signal: AbortSignal) {
    const options = { ...tts, signal, onFallback: this.onFallback, usage: this.usage };
    const chunks = this.engines.synthesis.synthesize(text, options);
    const trace = this.call.trace;
    return trace ? timed(chunks, text.length, signal, (r) => trace.engineRequest(r)) : chunks;
  }

  private onFallback = (f: Fallback): void => {
    log.warn("engine fallback", { session_id: this.call.sessionId, ...f });
    this.call.log.add("worker", "engine_fallback", { ...f });
  };
}

/** The chunks as they come, the request's times and outcome told when it ends (traced calls). */
async function* timed(
  chunks: AsyncIterable<RoutedChunk>,
  characters: number,
  signal: AbortSignal,
  report: (r: EngineRequest) => void,
): AsyncIterable<RoutedChunk> {
  const startMs = Date.now();
  let firstMs: number | undefined, engine: string | undefined;
  let outcome: EngineRequest["outcome"] | undefined;
  try {
    for await (const chunk of chunks) {
      if (firstMs === undefined) firstMs = Date.now();
      engine = chunk.engine;
      yield chunk;
    }
    outcome = "ok";
  } catch (err) {
    outcome = signal.aborted ? "cancelled" : "failed";
    throw err;
  } finally {
    // No outcome: the consumer stopped reading early (the unit was cut off).
    outcome ??= "cancelled";
    report({ leg: "synthesis", engine, startMs, firstMs, endMs: Date.now(), characters, outcome });
  }
}
