// Starts the engines a speech config names, with the VAD model, as the worker's CallEngines.
// Local engines load their threads here (before the node registers, so no call is routed to a
// worker that cannot speak yet); provider engines connect per call, and are probed here once
// (engine_health.ts), so a node whose provider key is refused registers without what that
// provider would have served.
import { sileroModel } from "../vad/silero.ts";
import { VoiceActivity } from "../vad/voice_activity.ts";
import type { RecognitionEngine } from "../stt/engine.ts";
import type { SynthesisEngine } from "../tts/engine.ts";
import type { CallEngines } from "./call_engines.ts";
import { ENGINE_TYPES, type RecognitionEngineType, type SynthesisEngineType } from "./registry.ts";
import { RecognitionRouter, SynthesisRouter } from "./routing.ts";
import { serveMatrix } from "./serve_matrix.ts";
import type { SpeechConfig } from "./speech_config.ts";
import { EngineHealth } from "./engine_health.ts";
import { type BreakerSettings, DEFAULT_BREAKER } from "./breaker.ts";

export async function startSpeechEngines(
  config: SpeechConfig,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
  breaker: Partial<BreakerSettings> = {},
): Promise<CallEngines> {
  const start = (name: string) => ({ options: config.options[name] ?? {}, env });
  const recognition = config.recognition.map((name) =>
    (ENGINE_TYPES[name] as RecognitionEngineType).create(start(name))
  );
  const synthesis = config.synthesis.map((name) =>
    (ENGINE_TYPES[name] as SynthesisEngineType).create(start(name))
  );
  const [model, ...started] = await Promise.allSettled([
    sileroModel(),
    ...recognition,
    ...synthesis,
  ]);
  const engines = started.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  const failed = [model, ...started].find((r) => r.status === "rejected");
  if (failed) {
    await Promise.all(engines.map((e) => e.close()));
    throw (failed as PromiseRejectedResult).reason;
  }
  const recognisers = engines.slice(0, recognition.length) as RecognitionEngine[];
  const synthesizers = engines.slice(recognition.length) as SynthesisEngine[];
  const vadModel = (model as PromiseFulfilledResult<Awaited<ReturnType<typeof sileroModel>>>)
    .value;
  const health = new EngineHealth([
    ...recognisers.map((e) => ({ name: e.name, leg: "recognition" as const, probe: probeOf(e) })),
    ...synthesizers.map((e) => ({ name: e.name, leg: "synthesis" as const, probe: probeOf(e) })),
  ], { ...DEFAULT_BREAKER, ...breaker });
  await health.start();
  const recognitionRouter = new RecognitionRouter(recognisers, config.routes, health);
  const synthesisRouter = new SynthesisRouter(synthesizers, config.routes, health);
  const up = (e: { name: string }) => health.up(e.name);
  return {
    vad: (settings, options) => Promise.resolve(new VoiceActivity(vadModel, settings, options)),
    recognition: recognitionRouter,
    synthesis: synthesisRouter,
    health,
    // What the engines that are up serve, now.
    get serves() {
      return serveMatrix(recognisers.filter(up), synthesizers.filter(up), config.routes);
    },
    async close() {
      health.close();
      await Promise.all([recognitionRouter.close(), synthesisRouter.close()]);
    },
  };
}

function probeOf(engine: { probe?: () => Promise<void> }): (() => Promise<void>) | undefined {
  return engine.probe ? () => engine.probe!() : undefined;
}
