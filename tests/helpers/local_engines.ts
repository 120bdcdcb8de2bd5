// The local engines alone, which need nothing outside this machine: Silero VAD (onnxruntime-node),
// pocketsphinx recognition (Deno FFI, English) and espeak-ng synthesis (WASM). A worker whose
// environment configures no provider starts the same set through media/engines/start.ts; tests
// take it here without a worker around it.
import { startSpeechEngines } from "../../media/engines/start.ts";
import { defaultSpeechConfig } from "../../media/engines/speech_config.ts";
import type { CallEngines } from "../../media/engines/call_engines.ts";

export function localEngines(): Promise<CallEngines> {
  return startSpeechEngines(defaultSpeechConfig(() => undefined));
}
