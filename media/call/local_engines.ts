// The local engines, which need nothing outside this machine: Silero VAD (onnxruntime-node),
// pocketsphinx recognition (Deno FFI, English) and espeak-ng synthesis (WASM). Each loads
// once per worker process, off the event loop where it is heavy.
import { sileroModel } from "../vad/silero.ts";
import { VoiceActivity } from "../vad/voice_activity.ts";
import { PocketsphinxEngine } from "../stt/pocketsphinx.ts";
import { EspeakEngine } from "../tts/espeak_engine.ts";
import type { CallEngines } from "./engines.ts";

export async function localEngines(): Promise<CallEngines> {
  const synthesis = new EspeakEngine();
  const model = await sileroModel();
  const recognition = await PocketsphinxEngine.create();
  await synthesis.ready;
  return {
    vad: (settings) => Promise.resolve(new VoiceActivity(model, settings)),
    recognition,
    synthesis,
    async close() {
      await Promise.all([synthesis.close(), recognition.close()]);
    },
  };
}
