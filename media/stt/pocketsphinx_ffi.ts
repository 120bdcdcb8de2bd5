/**
 * Synchronous binding to Debian's PocketSphinx 0.8+5prealpha (libpocketsphinx.so.3,
 * libsphinxbase.so.3) through Deno FFI. Every call blocks the calling thread: use it from the
 * recognition thread (pocketsphinx_thread.ts), never from the media worker's event loop.
 *
 * Configuration goes through the non-variadic cmd_ln_parse_r (variadic cmd_ln_init is not
 * callable through FFI). Note that the acoustic model's feat.params (-cmn, -cmninit, -agc ...)
 * override the same options given here: this version reads it after the command line.
 */

/** What `apt-get install` needs for this engine. */
export const POCKETSPHINX_APT_PACKAGES = "pocketsphinx pocketsphinx-en-us libpocketsphinx-dev";

/** Where pocketsphinx-en-us puts the US English model. */
export const EN_US_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";

const LIBS = { ps: "libpocketsphinx.so.3", sb: "libsphinxbase.so.3" } as const;

/** Thrown when the shared libraries or the model are not installed. */
export class PocketsphinxMissingError extends Error {
  /** What is missing, e.g. "model file /usr/share/... is missing". */
  constructor(readonly what: string) {
    super(
      `pocketsphinx is not usable: ${what}. Install it with: ` +
        `apt-get install -y ${POCKETSPHINX_APT_PACKAGES}`,
    );
    this.name = "PocketsphinxMissingError";
  }
}

const sbSymbols = {
  cmd_ln_parse_r: {
    parameters: ["pointer", "pointer", "i32", "pointer", "i32"],
    result: "pointer",
  },
  cmd_ln_free_r: { parameters: ["pointer"], result: "i32" },
  err_set_logfp: { parameters: ["pointer"], result: "void" },
  // (cmn_t *, float *vec): the live cepstral-mean estimate carried from utterance to utterance.
  cmn_live_get: { parameters: ["pointer", "buffer"], result: "void" },
  cmn_live_set: { parameters: ["pointer", "buffer"], result: "void" },
  // (config, path, NGRAM_AUTO = 0, logmath): an LM several decoders of one thread can share.
  ngram_model_read: { parameters: ["pointer", "buffer", "i32", "pointer"], result: "pointer" },
  ngram_model_retain: { parameters: ["pointer"], result: "pointer" },
  // Drops one reference; returns the references left (0: freed).
  ngram_model_free: { parameters: ["pointer"], result: "i32" },
  // A standalone log base, to read an LM's vocabulary without a decoder (lm_dictionary.ts).
  logmath_init: { parameters: ["f64", "i32", "i32"], result: "pointer" },
  logmath_free: { parameters: ["pointer"], result: "i32" },
  ngram_wid: { parameters: ["pointer", "buffer"], result: "i32" },
  ngram_unknown_wid: { parameters: ["pointer"], result: "i32" },
  // (model, wid, history, n_hist, *n_used): with no history, the word's unigram log probability.
  ngram_ng_score: {
    parameters: ["pointer", "i32", "pointer", "i32", "buffer"],
    result: "i32",
  },
} as const;

const psSymbols = {
  ps_args: { parameters: [], result: "pointer" },
  ps_init: { parameters: ["pointer"], result: "pointer" },
  ps_free: { parameters: ["pointer"], result: "i32" },
  ps_start_stream: { parameters: ["pointer"], result: "i32" },
  ps_start_utt: { parameters: ["pointer"], result: "i32" },
  // (ps, int16 samples, n_samples, no_search, full_utt)
  ps_process_raw: { parameters: ["pointer", "buffer", "usize", "i32", "i32"], result: "i32" },
  ps_end_utt: { parameters: ["pointer"], result: "i32" },
  ps_get_hyp: { parameters: ["pointer", "buffer"], result: "pointer" },
  ps_get_feat: { parameters: ["pointer"], result: "pointer" },
  ps_get_config: { parameters: ["pointer"], result: "pointer" },
  ps_get_logmath: { parameters: ["pointer"], result: "pointer" },
  ps_set_lm: { parameters: ["pointer", "buffer", "pointer"], result: "i32" },
  ps_set_search: { parameters: ["pointer", "buffer"], result: "i32" },
} as const;

// sphinxbase 0.8+5prealpha (x86_64) struct layout, checked against the model at run time:
// feat_t.cepsize at 16 and feat_t.cmn_struct at 88; cmn_t { float *cmn_mean; float *cmn_var;
// float *sum; int32 nframe; int32 veclen }.
const FEAT_CEPSIZE = 16, FEAT_CMN_STRUCT = 88;
const CMN_SUM = 16, CMN_NFRAME = 24, CMN_VECLEN = 28, CMN_SIZE = 32;

interface Libs {
  sb: Deno.DynamicLibrary<typeof sbSymbols>;
  ps: Deno.DynamicLibrary<typeof psSymbols>;
}

let libs: Libs | undefined;

/** Files the default English configuration reads; checked up front for a clear error. */
export function enUsModelFiles(dir = EN_US_MODEL_DIR): string[] {
  return [`${dir}/en-us/mdef`, `${dir}/en-us.lm.bin`, `${dir}/cmudict-en-us.dict`];
}

/** Opens the libraries once per thread and silences their logging (it goes to stderr). */
function open(): Libs {
  if (libs) return libs;
  let sb: Libs["sb"] | undefined;
  try {
    sb = Deno.dlopen(LIBS.sb, sbSymbols);
    const ps = Deno.dlopen(LIBS.ps, psSymbols);
    sb.symbols.err_set_logfp(null);
    libs = { sb, ps };
    return libs;
  } catch (e) {
    sb?.close();
    throw new PocketsphinxMissingError(
      `cannot load ${LIBS.sb} / ${LIBS.ps} (${(e as Error).message})`,
    );
  }
}

/** Throws PocketsphinxMissingError unless the libraries load and the model files exist. */
export function checkInstalled(modelFiles: string[] = enUsModelFiles()): void {
  open();
  for (const f of modelFiles) {
    try {
      Deno.statSync(f);
    } catch {
      throw new PocketsphinxMissingError(`model file ${f} is missing`);
    }
  }
}

/** The -cmninit of a model's feat.params (the decoder's first cepstral-mean estimate). */
export function modelCmnInit(hmmDir: string): Float32Array | null {
  try {
    const m = Deno.readTextFileSync(`${hmmDir}/feat.params`).match(/^-cmninit\s+(\S+)/m);
    return m ? Float32Array.from(m[1].split(",").map(Number)) : null;
  } catch {
    return null;
  }
}

/** Decoder options as `-name value` pairs, e.g. `{ lw: "6.5", beam: "1e-48" }`. */
export type DecoderArgs = Record<string, string>;

/** The default English setup: acoustic model, generic trigram LM, CMU dictionary. */
export function enUsArgs(dir = EN_US_MODEL_DIR): DecoderArgs {
  return {
    hmm: `${dir}/en-us`,
    lm: `${dir}/en-us.lm.bin`,
    dict: `${dir}/cmudict-en-us.dict`,
    samprate: "16000",
  };
}

const enc = new TextEncoder();
const cstr = (s: string) => enc.encode(s + "\0");

/**
 * A call's adaptation to its channel: the decoder's live cepstral-mean (CMN) state, which is all
 * pocketsphinx carries from one utterance to the next once the stream restarts per utterance.
 * `sum` and `frames` are what the next update averages over (a window of 500-800 frames).
 */
export interface CmnState {
  mean: Float32Array;
  sum: Float32Array;
  frames: number;
}

/**
 * Each of `words`' unigram log probability in the language model at `path` (pocketsphinx's log
 * base 1.0001), or null for a word it does not know. Reads the model on its own (a log base of
 * its own) and frees it before returning.
 */
export function lmUnigramScores(path: string, words: readonly string[]): (number | null)[] {
  const sb = open().sb.symbols;
  const logmath = sb.logmath_init(1.0001, 0, 0);
  if (!logmath) throw new Error("sphinxbase logmath_init failed");
  try {
    const lm = sb.ngram_model_read(null, cstr(path), 0, logmath);
    if (!lm) throw new Error(`pocketsphinx could not read the language model ${path}`);
    try {
      const unknown = sb.ngram_unknown_wid(lm);
      const used = new Int32Array(1);
      return words.map((w) => {
        const wid = sb.ngram_wid(lm, cstr(w));
        return wid === unknown ? null : sb.ngram_ng_score(lm, wid, null, 0, used);
      });
    } finally {
      sb.ngram_model_free(lm);
    }
  } finally {
    sb.logmath_free(logmath);
  }
}

/**
 * A language model read once and shared by the decoders of one thread (~30 MB instead of one
 * copy per decoder). Reference-counted by sphinxbase: every decoder using it holds a reference
 * and this object holds one until release(), so it is freed exactly once, by the last holder.
 * Not for use from two threads: scoring writes the model's caches.
 */
export class SharedLm {
  #ptr: NonNullable<Deno.PointerValue>;
  #held = true;

  /** Reads `path` with the configuration and log base of `like` (any decoder of the thread). */
  constructor(readonly path: string, like: PsDecoder) {
    const l = open();
    const ps = like.pointer;
    const lm = l.sb.symbols.ngram_model_read(
      l.ps.symbols.ps_get_config(ps),
      cstr(path),
      0,
      l.ps.symbols.ps_get_logmath(ps),
    );
    if (!lm) throw new Error(`pocketsphinx could not read the language model ${path}`);
    this.#ptr = lm;
  }

  /** The ngram_model_t: valid while anyone holds a reference (this object until release()). */
  get pointer(): NonNullable<Deno.PointerValue> {
    return this.#ptr;
  }

  /** Holders of the model: decoders using it, plus this object until release(). */
  get references(): number {
    const l = open().sb.symbols;
    l.ngram_model_retain(this.pointer);
    return l.ngram_model_free(this.pointer);
  }

  /** Takes one more reference (released by ngram_model_free, e.g. by a test). */
  retain(): void {
    open().sb.symbols.ngram_model_retain(this.pointer);
  }

  /** Drops one reference taken by retain(); returns the references left. */
  drop(): number {
    return open().sb.symbols.ngram_model_free(this.pointer);
  }

  /** Drops this object's reference; returns the references left (0: the model was freed). */
  release(): number {
    if (!this.#held) return 0;
    this.#held = false;
    return open().sb.symbols.ngram_model_free(this.#ptr);
  }
}

/** One ps_decoder_t. Not thread-safe; all methods are synchronous. */
export class PsDecoder {
  #ptr: Deno.PointerValue;
  #score = new Int32Array(1);
  #inUtt = false;
  #cmn: Deno.PointerValue = null;
  #cmnPrior: Float32Array | null = null;

  /**
   * Loads the model named by `args`. With `lm` the decoder searches that shared model instead of
   * loading its own (`args.lm` is then ignored).
   */
  constructor(args: DecoderArgs, lm?: SharedLm) {
    const l = open();
    if (lm) {
      args = { ...args };
      delete args.lm;
    }
    // argv[0] is skipped by cmd_ln_parse_r as the program name.
    const strings = ["pocketsphinx", ...Object.entries(args).flatMap(([k, v]) => [`-${k}`, v])]
      .map(cstr);
    const argv = new BigUint64Array(strings.length);
    strings.forEach((s, i) => argv[i] = BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(s))));
    const config = l.sb.symbols.cmd_ln_parse_r(
      null,
      l.ps.symbols.ps_args(),
      strings.length,
      Deno.UnsafePointer.of(argv),
      1,
    );
    if (!config) throw new Error(`pocketsphinx rejected its options: ${JSON.stringify(args)}`);
    const ps = l.ps.symbols.ps_init(config);
    // ps_init keeps its own reference to the config.
    l.sb.symbols.cmd_ln_free_r(config);
    if (!ps) throw new Error(`pocketsphinx ps_init failed for ${JSON.stringify(args)}`);
    this.#ptr = ps;
    if (lm) {
      try {
        this.useLm(lm);
      } catch (e) {
        this.free();
        throw e;
      }
    }
    this.#findCmn(args.hmm);
  }

  /** Searches `lm` from now on (it takes its own reference, dropped by free()). */
  useLm(lm: SharedLm): void {
    const ps = open().ps.symbols, name = cstr("_default");
    if (
      ps.ps_set_lm(this.#live(), name, lm.pointer) < 0 || ps.ps_set_search(this.#live(), name) < 0
    ) {
      throw new Error(`pocketsphinx could not use the shared language model ${lm.path}`);
    }
  }

  /** The ps_decoder_t, for SharedLm. */
  get pointer(): NonNullable<Deno.PointerValue> {
    return this.#live();
  }

  get inUtterance(): boolean {
    return this.#inUtt;
  }

  start(): void {
    this.#check("ps_start_utt", open().ps.symbols.ps_start_utt(this.#live()));
    this.#inUtt = true;
  }

  /**
   * Feeds samples (16 kHz mono) into the running utterance. With `wholeUtterance` the samples
   * are the entire utterance and are normalised by their own cepstral mean (batch CMN) instead
   * of the live estimate carried over from earlier utterances.
   */
  process(pcm: Int16Array, wholeUtterance = false): void {
    if (pcm.length === 0) return;
    this.#check(
      "ps_process_raw",
      open().ps.symbols.ps_process_raw(
        this.#live(),
        pcm,
        BigInt(pcm.length),
        0,
        wholeUtterance ? 1 : 0,
      ),
    );
  }

  /** Best hypothesis so far (partial inside an utterance, final after end()). "" if none. */
  hyp(): string {
    const p = open().ps.symbols.ps_get_hyp(this.#live(), this.#score);
    return p ? Deno.UnsafePointerView.getCString(p).trim() : "";
  }

  /**
   * Whether forgetAdaptation() can work: the struct layout matched this model (it always does
   * for Debian 12's sphinxbase; another build falls back to fresh decoders per call).
   */
  get canForgetAdaptation(): boolean {
    return this.#cmn !== null;
  }

  /** The live cepstral-mean estimate (13 values), or null where not reachable. */
  cmnEstimate(): Float32Array | null {
    if (!this.#cmn) return null;
    const v = new Float32Array(this.#cmnPrior!.length);
    open().sb.symbols.cmn_live_get(this.#cmn, v);
    return v;
  }

  /**
   * Starts a new stream: the front end's noise-level estimate starts over. Done at every
   * utterance, so nothing of an earlier utterance's audio but the CMN state (adapt()) carries
   * over, whichever decoder decoded it.
   */
  restartStream(): void {
    this.end();
    this.#check("ps_start_stream", open().ps.symbols.ps_start_stream(this.#live()));
  }

  /** The call's adaptation so far (to move it to another decoder), or null where unsupported. */
  adaptation(): CmnState | null {
    if (!this.#cmn) return null;
    const n = this.#cmnPrior!.length;
    const sum = new Deno.UnsafePointerView(this.#cmn).getPointer(CMN_SUM);
    if (!sum) return null;
    return {
      mean: this.cmnEstimate()!,
      sum: new Float32Array(Deno.UnsafePointerView.getArrayBuffer(sum, 4 * n)).slice(),
      frames: new Deno.UnsafePointerView(this.#cmn).getInt32(CMN_NFRAME),
    };
  }

  /**
   * Puts a call's adaptation (from adaptation(), on this or another decoder) into this decoder;
   * null puts ps_init's state back: the model's prior with no frames counted, so a call's first
   * utterance replaces it entirely. Returns false where unsupported.
   */
  adapt(state: CmnState | null): boolean {
    if (!this.#cmn) return false;
    const cmn = this.#cmn, n = this.#cmnPrior!.length;
    const sb = open().sb.symbols;
    // cmn_live_set also fills sum and nframe (as 500 frames of the mean); both are overwritten.
    sb.cmn_live_set(cmn, state?.mean ?? this.#cmnPrior!);
    const sum = new Deno.UnsafePointerView(cmn).getPointer(CMN_SUM);
    if (!sum) return false;
    const into = new Float32Array(Deno.UnsafePointerView.getArrayBuffer(sum, 4 * n));
    if (state) into.set(state.sum);
    else into.fill(0);
    new DataView(Deno.UnsafePointerView.getArrayBuffer(cmn, CMN_SIZE)).setInt32(
      CMN_NFRAME,
      state?.frames ?? 0,
      true,
    );
    return true;
  }

  /**
   * Puts the decoder back in the state ps_init left it: cepstral-mean estimate at the model's
   * prior with no frames counted, noise estimate restarted. Returns false if unsupported.
   */
  forgetAdaptation(): boolean {
    if (!this.#cmn) return false;
    this.restartStream();
    return this.adapt(null);
  }

  end(): void {
    if (!this.#inUtt) return;
    this.#inUtt = false;
    this.#check("ps_end_utt", open().ps.symbols.ps_end_utt(this.#live()));
  }

  free(): void {
    if (!this.#ptr) return;
    open().ps.symbols.ps_free(this.#ptr);
    this.#ptr = null;
    this.#cmn = null;
  }

  /** Finds the cmn_t and keeps the prior, only if what it reads there is the model's -cmninit. */
  #findCmn(hmm: string | undefined): void {
    const prior = hmm ? modelCmnInit(hmm) : null;
    const feat = open().ps.symbols.ps_get_feat(this.#live());
    if (!prior || !feat) return;
    const view = new Deno.UnsafePointerView(feat);
    if (view.getInt32(FEAT_CEPSIZE) !== prior.length) return;
    const cmn = view.getPointer(FEAT_CMN_STRUCT);
    if (!cmn) return;
    const c = new Deno.UnsafePointerView(cmn);
    if (c.getInt32(CMN_VECLEN) !== prior.length || c.getInt32(CMN_NFRAME) !== 0) return;
    const now = new Float32Array(prior.length);
    open().sb.symbols.cmn_live_get(cmn, now);
    if (now.some((x, i) => Math.abs(x - prior[i]) > 0.01)) return;
    this.#cmn = cmn;
    this.#cmnPrior = now;
  }

  #live(): NonNullable<Deno.PointerValue> {
    if (!this.#ptr) throw new Error("pocketsphinx decoder is freed");
    return this.#ptr;
  }

  #check(op: string, rc: number): void {
    if (rc < 0) throw new Error(`pocketsphinx ${op} failed (${rc})`);
  }
}
