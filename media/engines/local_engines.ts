// The local engines alone, which need nothing outside this machine: Silero VAD (onnxruntime-node),
// pocketsphinx recognition (Deno FFI, English) and espeak-ng synthesis (WASM). What a worker runs
// when its environment configures no provider.
import { startSpeechEngines } from "./start.ts";
import { defaultSpeechConfig } from "./speech_config.ts";
import type { CallEngines } from "./call_engines.ts";

export function localEngines(): Promise<CallEngines> {
  return startSpeechEngines(defaultSpeechConfig(() => undefined));
}
