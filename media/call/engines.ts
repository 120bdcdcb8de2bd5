// The speech engines a worker serves calls with, created once per process and shared by its
// calls (each call opens its own streams on them). The interfaces are the engines' own; this
// module only says which local engines a worker uses.
import type { VadSettings, VoiceActivity } from "../vad/voice_activity.ts";
import type { RecognitionEngine } from "../stt/engine.ts";
import type { SynthesisEngine } from "../tts/engine.ts";

export interface CallEngines {
  /** A VAD stream with its own recurrent state, on the process-wide model. */
  vad(settings?: VadSettings): Promise<VoiceActivity>;
  recognition: RecognitionEngine;
  synthesis: SynthesisEngine;
  /** Frees the engines' threads. */
  close(): Promise<void>;
}
