// The speech engines a worker serves calls with, created once per process and shared by its
// calls (each call opens its own streams on them), routed per language (media/engines/).
import type { ServeMatrix } from "../../common/capabilities.ts";
import type { VadSettings, VoiceActivity, VoiceActivityOptions } from "../vad/voice_activity.ts";
import type { RecognitionRouter, SynthesisRouter } from "./routing.ts";
import type { EngineHealth } from "./engine_health.ts";

export interface CallEngines {
  /** A VAD stream with its own recurrent state, on the process-wide model. */
  vad(settings?: VadSettings, options?: VoiceActivityOptions): Promise<VoiceActivity>;
  recognition: RecognitionRouter;
  synthesis: SynthesisRouter;
  /**
   * What these engines serve now, in routing order: registered with the node, and again whenever
   * a provider engine goes down or comes back (`health`).
   */
  readonly serves: ServeMatrix;
  /** The provider engines' breakers; absent, every engine is always up. */
  health?: EngineHealth;
  /** Frees the engines' threads and connections. */
  close(): Promise<void>;
}
