// Routing a call's speech to engines: for each language (and persona) the routes give an ordered
// list of engines; the first that works is used and the others are its fallbacks.
//
// Recognition: a stream keeps the audio of the utterance in progress (bounded), so when its
// engine fails (a provider drops, a thread dies) the utterance is recognised again by the next
// engine of the route, which then serves the rest of the call. With no engine left, the engine
// that failed is opened once more (a fresh thread after a crash, a new provider connection) and
// given the utterance; only when that fails too is the failure the call's.
// Synthesis: a unit whose engine fails before its first audio is synthesized by the next engine,
// and with none left by the last engine once more (a crashed thread is replaced); once audio has
// gone out, a failure is the unit's (a different voice mid-unit is worse).
// Breakers: an engine that is down (engine_health.ts: its key refused, or unreachable) is skipped
// without being asked, as a fallback and as a fresh try alike, and each use's outcome is reported
// to its breaker.
import {
  type ChannelKind,
  type RecognitionEngine,
  RecognitionError,
  type RecognitionResult,
  type RecognitionStream,
  UnservedLanguageError,
} from "../stt/engine.ts";
import {
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
  type SynthesisOptions,
  UnservedError,
} from "../tts/engine.ts";
import { recognitionRoute, type Routes, synthesisRoute } from "./serve_matrix.ts";
import type { EngineOutcomes } from "./engine_health.ts";

/** With no breakers: every engine up, nothing to report. */
const ALWAYS_UP: EngineOutcomes = { up: () => true, succeeded: () => {}, failed: () => {} };

/** A result that says which engine produced it. */
export interface RoutedResult extends RecognitionResult {
  engine: string;
}

/** A chunk that says which engine made it. */
export interface RoutedChunk extends SynthesisChunk {
  engine: string;
}

/** One engine of a route gave up and the next took over. */
export interface Fallback {
  leg: "recognition" | "synthesis";
  from: string;
  to: string;
  reason: string;
}

/**
 * What one engine of a router is doing across the node's calls, for the node's metrics: work
 * outstanding now (a unit being synthesized, an utterance awaiting its final text: running or
 * waiting in the engine's own queue) and the failures so far (aborts and closes are not failures).
 */
export interface EngineActivity {
  outstanding: number;
  errors: number;
}

function activityOf(engines: readonly { name: string }[]): Map<string, EngineActivity> {
  return new Map(engines.map((e) => [e.name, { outstanding: 0, errors: 0 }]));
}

/** A call's usage record: what its engines did, in all and per engine. */
export interface UsageRecord {
  recognisedSeconds: number;
  synthesizedCharacters: number;
  /** Engine name → what it did on this call (the usage record's by_engine). */
  byEngine: Record<string, { recognised_seconds?: number; synthesized_characters?: number }>;
}

/**
 * What the routers served one call (or stream), kept as they serve it: a recognised utterance's
 * audio counts for the engine that recognised it, a unit's characters once handed to synthesis
 * and, per engine, for the engine whose audio it was (counted at its first audio).
 */
export class CallUsage {
  #recognisedMs = 0;
  #synthesizedCharacters = 0;
  readonly #recognisedMsBy = new Map<string, number>();
  readonly #charactersBy = new Map<string, number>();

  recognised(engine: string, audioMs: number): void {
    this.#recognisedMs += audioMs;
    this.#recognisedMsBy.set(engine, (this.#recognisedMsBy.get(engine) ?? 0) + audioMs);
  }

  /** `characters` handed to synthesis; `engine` once its first audio of them came. */
  synthesized(characters: number, engine?: string): void {
    if (engine === undefined) this.#synthesizedCharacters += characters;
    else this.#charactersBy.set(engine, (this.#charactersBy.get(engine) ?? 0) + characters);
  }

  record(): UsageRecord {
    const byEngine: UsageRecord["byEngine"] = {};
    for (const [engine, ms] of this.#recognisedMsBy) {
      (byEngine[engine] ??= {}).recognised_seconds = ms / 1000;
    }
    for (const [engine, n] of this.#charactersBy) {
      (byEngine[engine] ??= {}).synthesized_characters = n;
    }
    return {
      recognisedSeconds: this.#recognisedMs / 1000,
      synthesizedCharacters: this.#synthesizedCharacters,
      byEngine,
    };
  }
}

/** Recognition audio kept for a replay: 30 s at 16 kHz. Longer utterances replay their start. */
const REPLAY_MAX_SAMPLES = 30 * 16_000;

export class RecognitionRouter {
  /** Engine name → its activity, over every stream this router opened. */
  readonly activity: Map<string, EngineActivity>;

  constructor(
    readonly engines: readonly RecognitionEngine[],
    readonly routes: Routes,
    readonly health: EngineOutcomes = ALWAYS_UP,
  ) {
    this.activity = activityOf(engines);
  }

  /** Every language some engine recognises. */
  get languages(): string[] {
    return [...new Set(this.engines.flatMap((e) => e.languages))];
  }

  route(language: string): RecognitionEngine[] {
    return recognitionRoute(this.engines, this.routes, language);
  }

  /**
   * A stream on the first engine of the route that opens. Rejects with UnservedLanguageError
   * when no engine serves the language, with RecognitionError when every one is down, and with
   * the last engine's error when none opens.
   */
  async open(
    language: string,
    onFallback?: (f: Fallback) => void,
    usage?: CallUsage,
    channel: ChannelKind = "wideband",
  ): Promise<RoutedStream> {
    const route = this.route(language);
    if (!route.length) {
      throw new UnservedLanguageError(language, "recognition", this.languages);
    }
    if (!route.some((e) => this.health.up(e.name))) {
      throw new RecognitionError(
        `no engine recognising ${language} is up (${route.map((e) => e.name).join(", ")} down)`,
      );
    }
    const stream = new RoutedStream(
      route,
      language,
      onFallback,
      this.activity,
      this.health,
      usage,
      channel,
    );
    await stream.start();
    return stream;
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.close()));
  }
}

export class RoutedStream implements RecognitionStream {
  #route: RecognitionEngine[];
  #index = -1;
  #inner?: RecognitionStream;
  #interim?: (text: string) => void;
  #utterance: Int16Array[] = [];
  #kept = 0;
  #closed = false;

  constructor(
    route: RecognitionEngine[],
    readonly language: string,
    private onFallback?: (f: Fallback) => void,
    private activity?: Map<string, EngineActivity>,
    private health: EngineOutcomes = ALWAYS_UP,
    private usage?: CallUsage,
    /** Given to every engine the stream opens, a fallback or a reopening too. */
    readonly channel: ChannelKind = "wideband",
  ) {
    this.#route = route;
  }

  /** The engine recognising now. */
  get engine(): string {
    return this.#route[this.#index]?.name ?? "";
  }

  /** Opens the first engine from #index + 1 on that opens; false when none is left. */
  async #next(reason?: string): Promise<boolean> {
    const midCall = this.#index >= 0;
    let from = this.engine;
    let lastError: unknown;
    while (++this.#index < this.#route.length) {
      const engine = this.#route[this.#index];
      if (!this.health.up(engine.name)) continue; // down: not asked
      try {
        const inner = await engine.open(this.language, { channel: this.channel });
        this.health.succeeded(engine.name);
        if (this.#closed) {
          inner.close();
          return false;
        }
        this.#inner = inner;
        inner.onInterim((text) => this.#interim?.(text));
        if (from && reason) {
          this.onFallback?.({ leg: "recognition", from, to: engine.name, reason });
        }
        return true;
      } catch (err) {
        this.#failed(engine.name, err);
        lastError = err;
        from = engine.name;
        reason = `${engine.name} could not open: ${(err as Error).message}`;
      }
    }
    if (!midCall) throw lastError ?? new RecognitionError(`no engine for ${this.language} is up`);
    return false;
  }

  async start(): Promise<void> {
    await this.#next();
  }

  push(pcm16k: Int16Array): void {
    if (this.#closed) return;
    // Kept for a replay: to the next engine, or to the same engine opened afresh.
    if (this.#kept < REPLAY_MAX_SAMPLES) {
      const keep = pcm16k.subarray(0, REPLAY_MAX_SAMPLES - this.#kept).slice();
      this.#utterance.push(keep);
      this.#kept += keep.length;
    }
    this.#inner?.push(pcm16k);
  }

  onInterim(cb: (text: string) => void): void {
    this.#interim = cb;
  }

  async finish(): Promise<RoutedResult> {
    const audio = this.#utterance;
    this.#utterance = [];
    this.#kept = 0;
    let reopened = false;
    for (;;) {
      const inner = this.#inner;
      if (!inner || this.#closed) throw new RecognitionError("recognition stream closed");
      const engine = this.engine;
      const index = this.#index;
      try {
        const result = await this.#outstanding(engine, inner.finish());
        this.health.succeeded(engine);
        this.usage?.recognised(engine, result.audioMs);
        return { ...result, engine };
      } catch (err) {
        if (this.#closed) throw err;
        this.#failed(engine, err);
        const reason = `${engine} failed: ${(err as Error).message}`;
        inner.close();
        this.#inner = undefined;
        if (!await this.#next(reason)) {
          if (reopened) throw err;
          reopened = true;
          if (!await this.#reopen(index, reason)) throw err;
        }
        for (const pcm of audio) this.#inner!.push(pcm);
      }
    }
  }

  /** Opens the engine at `index` of the route again, as a fallback to itself. */
  async #reopen(index: number, reason: string): Promise<boolean> {
    const engine = this.#route[index];
    if (!engine || !this.health.up(engine.name)) return false;
    try {
      const inner = await engine.open(this.language, { channel: this.channel });
      this.health.succeeded(engine.name);
      if (this.#closed) {
        inner.close();
        return false;
      }
      this.#index = index;
      this.#inner = inner;
      inner.onInterim((text) => this.#interim?.(text));
      this.onFallback?.({ leg: "recognition", from: engine.name, to: engine.name, reason });
      return true;
    } catch (err) {
      this.#failed(engine.name, err);
      return false;
    }
  }

  /** Counts `work` as outstanding at `engine` until it settles. */
  async #outstanding<T>(engine: string, work: Promise<T>): Promise<T> {
    const activity = this.activity?.get(engine);
    if (activity) activity.outstanding++;
    try {
      return await work;
    } finally {
      if (activity) activity.outstanding--;
    }
  }

  #failed(engine: string, err: unknown): void {
    const activity = this.activity?.get(engine);
    if (activity) activity.errors++;
    this.health.failed(engine, err);
  }

  close(): void {
    this.#closed = true;
    this.#inner?.close();
    this.#utterance = [];
  }
}

export class SynthesisRouter {
  /** Engine name → its activity, over every unit this router synthesized. */
  readonly activity: Map<string, EngineActivity>;

  constructor(
    readonly engines: readonly SynthesisEngine[],
    readonly routes: Routes,
    readonly health: EngineOutcomes = ALWAYS_UP,
  ) {
    this.activity = activityOf(engines);
  }

  get voices(): string[] {
    return [...new Set(this.engines.flatMap((e) => e.voices))];
  }

  get languages(): string[] {
    return [...new Set(this.engines.flatMap((e) => e.languages))];
  }

  route(language: string, voice: string): SynthesisEngine[] {
    return synthesisRoute(this.engines, this.routes, language, voice);
  }

  /**
   * One unit on the first engine of the route that makes audio. Throws UnservedError at once when
   * no engine speaks the language in the voice.
   */
  synthesize(
    text: string,
    options: SynthesisOptions & { onFallback?: (f: Fallback) => void; usage?: CallUsage },
  ): AsyncIterable<RoutedChunk> {
    options.usage?.synthesized(text.length);
    const route = this.route(options.language, options.voice);
    if (!route.length) {
      const servesLanguage = this.languages.includes(options.language);
      throw servesLanguage
        ? new UnservedError("voice", options.voice, "synthesis", this.voices)
        : new UnservedError("language", options.language, "synthesis", this.languages);
    }
    const activity = this.activity;
    const health = this.health;
    const up = (e: SynthesisEngine) => health.up(e.name);
    // The last engine gets a second try: a crashed thread has been replaced by then.
    const attempts = [...route, route[route.length - 1]];
    return (async function* () {
      let lastError: unknown;
      for (let i = 0; i < attempts.length; i++) {
        const engine = attempts[i];
        if (!up(engine)) continue; // down (maybe since the last attempt): not asked
        const act = activity.get(engine.name);
        let started = false;
        if (act) act.outstanding++;
        try {
          for await (const chunk of engine.synthesize(text, options)) {
            if (!started) {
              health.succeeded(engine.name);
              if (!options.signal?.aborted) options.usage?.synthesized(text.length, engine.name);
            }
            started = true;
            yield { ...chunk, engine: engine.name };
          }
          return;
        } catch (err) {
          if (!options.signal?.aborted) {
            if (act) act.errors++;
            health.failed(engine.name, err);
          }
          if (started || options.signal?.aborted) throw err;
          lastError = err;
          const next = attempts.slice(i + 1).find(up);
          if (next) {
            options.onFallback?.({
              leg: "synthesis",
              from: engine.name,
              to: next.name,
              reason: (err as Error).message,
            });
          }
        } finally {
          if (act) act.outstanding--;
        }
      }
      if (lastError === undefined) {
        const names = route.map((e) => e.name).join(", ");
        throw new SynthesisError(`no engine speaking ${options.language} is up (${names} down)`);
      }
      throw lastError instanceof Error ? lastError : new SynthesisError(String(lastError));
    })();
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.close()));
  }
}
