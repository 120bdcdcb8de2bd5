// The speech engines as one call uses them: recognition opened for the call's channel, synthesis
// in its voice, both counted in its usage (the session's record), and an engine's fallback to the
// next of its route logged (the call goes on).
import { logger } from "../../common/log.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import { CallUsage, type Fallback } from "../engines/routing.ts";
import type { ChannelKind } from "../stt/engine.ts";
import type { SessionLog } from "./session_log.ts";

const log = logger("conversation");

export class CallSpeech {
  readonly usage = new CallUsage();

  constructor(
    private readonly engines: CallEngines,
    private readonly call: { sessionId: string; log: SessionLog; channel?: ChannelKind },
  ) {}

  openRecognition(language: string) {
    const { recognition } = this.engines;
    return recognition.open(language, this.onFallback, this.usage, this.call.channel);
  }

  synthesize(text: string, tts: { voice: string; language: string }, signal: AbortSignal) {
    const options = { ...tts, signal, onFallback: this.onFallback, usage: this.usage };
    return this.engines.synthesis.synthesize(text, options);
  }

  private onFallback = (f: Fallback): void => {
    log.warn("engine fallback", { session_id: this.call.sessionId, ...f });
    this.call.log.add("worker", "engine_fallback", { ...f });
  };
}
