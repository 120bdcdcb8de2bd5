// A worker's engines warmed before it registers (issue 35): the first call on a fresh node paid
// for what every call needs once per process (the VAD model's first inference, a recognition
// stream's first open, the synthesis voice's first words, their JIT), about 170 ms more than a
// warm node's call in bench/first_greeting.ts. Doing it here, while no call can reach the node,
// keeps that wait off a caller. A failure is logged and the node still serves: warming is an
// optimisation, and the engines' own start already proved they run. Only local engines are
// warmed: a provider's first request would be billed, counted as usage and, behind a fake, take
// a transcript meant for a call; the provider's own probe already opened its connection.
import type { CallEngines } from "../engines/call_engines.ts";
import { ENGINE_TYPES } from "../engines/registry.ts";
import { DEFAULT_LANGUAGE, DEFAULT_VOICE } from "../../common/capabilities.ts";

/** One short utterance's worth of each engine, in the default voice and language. */
export async function warmEngines(
  engines: CallEngines,
  log: { warn(msg: string, data?: Record<string, unknown>): void },
): Promise<number> {
  const started = performance.now();
  const local = (e: { name: string } | undefined) => ENGINE_TYPES[e?.name ?? ""]?.kind === "local";
  const vad = async () => {
    const stream = await engines.vad();
    try {
      await stream.push(new Int16Array(16_000 / 5)); // 200 ms of silence: a few inferences
    } finally {
      stream.close();
    }
  };
  const recognition = async () => {
    if (!local(engines.recognition.route(DEFAULT_LANGUAGE)[0])) return;
    // A phone call's channel: the narrowband model is the one a phone's first call opens.
    const stream = await engines.recognition.open(
      DEFAULT_LANGUAGE,
      undefined,
      undefined,
      "narrowband",
    );
    stream.push(new Int16Array(16_000 / 5));
    stream.close();
  };
  const synthesis = async () => {
    if (!local(engines.synthesis.route(DEFAULT_LANGUAGE, DEFAULT_VOICE)[0])) return;
    const signal = new AbortController().signal;
    const options = { voice: DEFAULT_VOICE, language: DEFAULT_LANGUAGE, signal };
    for await (const _ of engines.synthesis.synthesize("Hello.", options)) { /* drained */ }
  };
  const results = await Promise.allSettled([vad(), recognition(), synthesis()]);
  for (const [i, r] of results.entries()) {
    if (r.status === "rejected") {
      log.warn("an engine could not be warmed; its first call may be slower", {
        engine: ["vad", "recognition", "synthesis"][i],
        error: String(r.reason),
      });
    }
  }
  return performance.now() - started;
}
