// Recognition of phone audio (issue 27): a call's first utterance over 8 kHz G.711, by the CMN
// prior it starts from, against later utterances and against wideband (Opus) audio.
// Run: deno run -A bench/media/phone_recognition.ts [--held] [--variants-only]
//      BENCH_PHONE_N=30 (sentences)  BENCH_PHONE_VARIANTS='feat:upperf=3500;args:lw=9'
//
// Audio: festival speaking DEV_SCRIPTS (choices are made on them; --held: HELD_SCRIPTS, which no
// choice looked at) (1) through Opus as a web call hears it, (2) over a phone line: 8 kHz, μ-law,
// the worker's CallerEdge back to 16 kHz (tests/helpers/phone_speech.ts), with the line's noise
// floor, and (3) the same with digital silence in the pauses, as SIPp sends. Recognised with the
// thread's own decoding (DecoderPool, CallRecogniser), each sentence as a fresh call's first
// utterance from a fixed prior, which the condition names:
//   wideband seed   media/stt/seed_prior.ts SEED_PRIOR (a fresh thread's, before channel kinds)
//   web-learnt      what a thread learnt from 8 web calls (tests' SCRIPTS through Opus)
//   narrowband seed NARROWBAND_SEED_PRIOR: the same derivation over the phone path
//   cold + 2nd pass the model's -cmninit, then the batch-CMN second pass (no prior at all)
// and "later": the sentence said as a call's second utterance, after the sentence before it.
// A last section runs calls in turn on one thread that learns (web, phone, web, ...), seeded as
// the engine seeds it: one prior for both channels (as before) against one per channel.
// BENCH_PHONE_VARIANTS decodes the phone audio also with other decoder options or filterbanks
// (below), each from a narrowband prior learnt under them. Figures, nothing asserted; results in
// docs/sip.md "Recognition of phone audio" and docs/decisions.md.
import { CallRecogniser, DecoderPool } from "../../media/stt/pocketsphinx_decoding.ts";
import { type DecoderArgs, EN_US_MODEL_DIR, enUsArgs } from "../../media/stt/pocketsphinx_ffi.ts";
import { SPEED_ARGS } from "../../media/stt/pocketsphinx.ts";
import { NARROWBAND_SEED_PRIOR, SEED_PRIOR, SEED_SENTENCES } from "../../media/stt/seed_prior.ts";
import type { ChannelKind } from "../../media/stt/engine.ts";
import { werCount } from "../../media/stt/wer.ts";
import { DEV_SCRIPTS, HELD_SCRIPTS, SCRIPTS } from "../../tests/helpers/test_speech.ts";
import { callerSpeechWav, throughOpus } from "../../tests/helpers/audio.ts";
import { speechThroughPhone } from "../../tests/helpers/phone_speech.ts";
import { readWav } from "../../caller/wav.ts";

const ARGS: DecoderArgs = { ...enUsArgs(), ...SPEED_ARGS };
const OPTIONS = { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 };
const HELD = Deno.args.includes("--held");
/**
 * Decoder variants for phone audio, e.g. `feat:upperf=3500;args:lw=9` (`;` between variants,
 * `,` between options). `args:` options go on the command line; `feat:` options replace the
 * model's feat.params lines, which this pocketsphinx reads after the command line (the filterbank
 * is fixed there), in a model directory of links with an edited feat.params.
 */
const VARIANTS = (Deno.env.get("BENCH_PHONE_VARIANTS") ?? "").split(";").filter((v) => v);
const VARIANTS_ONLY = Deno.args.includes("--variants-only");
const N = Number(Deno.env.get("BENCH_PHONE_N") ?? 30);
const sentences = (HELD ? HELD_SCRIPTS : DEV_SCRIPTS).slice(0, N);

/** Festival at 48 kHz with a 1-LSB dither, through Opus: as seed_prior.test.ts makes it. */
async function webAudio(text: string, seed: number): Promise<Int16Array> {
  const pcm = Int16Array.from((await readWav(await callerSpeechWav(text))).samples);
  let s = seed >>> 0;
  const uniform = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  for (let i = 0; i < pcm.length; i++) {
    pcm[i] = Math.max(-32768, Math.min(32767, pcm[i] + Math.round(uniform() - uniform())));
  }
  return throughOpus(pcm);
}

/** A pool whose prior stays what it was given: every sentence starts from the same one. */
class FixedPriorPool extends DecoderPool {
  override learn(): void {}
}

function push(r: CallRecogniser, pcm: Int16Array) {
  for (let o = 0; o < pcm.length; o += 320) r.push(pcm.subarray(o, o + 320));
}

/** The prior a learning pool holds after `audios` were each one call's first utterance. */
function learnt(args: DecoderArgs, audios: Int16Array[]): number[] {
  const pool = new DecoderPool(args, { spares: 1, maxIdle: 2, shareLm: true });
  try {
    for (const a of audios) {
      const r = new CallRecogniser(pool, OPTIONS);
      push(r, a);
      r.finish();
      r.close();
    }
    return Array.from(pool.firstState()!.mean, (v) => Math.round(v * 100) / 100);
  } finally {
    pool.close();
  }
}

interface Tally {
  errors: number;
  words: number;
  ms: number;
}

/** Ends `r`'s utterance and adds its words against `text`, and the time finishing took, to `t`. */
function score(r: CallRecogniser, text: string, t: Tally): void {
  const t0 = performance.now();
  const c = werCount(text, r.finish());
  t.ms += performance.now() - t0;
  r.close();
  t.errors += c.errors;
  t.words += c.words;
}

/** Each audio as a fresh call's first utterance from `prior` (null: cold, with the 2nd pass). */
function firstUtterances(args: DecoderArgs, prior: readonly number[] | null, audios: Int16Array[]) {
  const pool = new FixedPriorPool(args, {
    spares: 1,
    maxIdle: 2,
    shareLm: true,
    warmPrior: prior !== null,
    seedPriors: prior ? { wideband: prior, narrowband: prior } : undefined,
  });
  const t: Tally = { errors: 0, words: 0, ms: 0 };
  try {
    for (const [i, a] of audios.entries()) {
      const r = new CallRecogniser(pool, OPTIONS);
      push(r, a);
      score(r, sentences[i], t);
    }
  } finally {
    pool.close();
  }
  return t;
}

/** Each audio as a call's second utterance, the sentence before it (cyclically) its first. */
function laterUtterances(args: DecoderArgs, prior: readonly number[], audios: Int16Array[]) {
  const pool = new FixedPriorPool(args, {
    spares: 1,
    maxIdle: 2,
    shareLm: true,
    seedPriors: { wideband: prior, narrowband: prior },
  });
  const t: Tally = { errors: 0, words: 0, ms: 0 };
  try {
    for (const [i, a] of audios.entries()) {
      const r = new CallRecogniser(pool, OPTIONS);
      push(r, audios[(i + audios.length - 1) % audios.length]);
      r.finish();
      push(r, a);
      score(r, sentences[i], t);
    }
  } finally {
    pool.close();
  }
  return t;
}

/**
 * Web and phone calls in turn on one thread that learns, each sentence once as each: the web and
 * the phone first utterances' tallies. `phoneChannel` "wideband" is the former single prior.
 */
function callsInTurn(phoneChannel: ChannelKind, web: Int16Array[], phone: Int16Array[]) {
  const pool = new DecoderPool(ARGS, {
    spares: 1,
    maxIdle: 2,
    shareLm: true,
    seedPriors: { wideband: SEED_PRIOR, narrowband: NARROWBAND_SEED_PRIOR },
  });
  const tally = { web: { errors: 0, words: 0, ms: 0 }, phone: { errors: 0, words: 0, ms: 0 } };
  try {
    for (const [i, text] of sentences.entries()) {
      for (
        const [kind, audio, channel] of [
          ["web", web[i], "wideband"],
          ["phone", phone[i], phoneChannel],
        ] as const
      ) {
        const r = new CallRecogniser(pool, OPTIONS, channel);
        push(r, audio);
        score(r, text, tally[kind]);
      }
    }
  } finally {
    pool.close();
  }
  return tally;
}

const rows: string[][] = [];
function row(audio: string, condition: string, t: Tally) {
  const wer = ((100 * t.errors) / t.words).toFixed(1);
  const finish = (t.ms / sentences.length).toFixed(0);
  rows.push([audio, condition, `${wer} % (${t.errors}/${t.words})`, `${finish} ms`]);
  console.error(`${audio} | ${condition} | ${wer} %`);
}

const started = performance.now();
const web = await Promise.all(sentences.map((s, i) => webAudio(s, 100 + i)));
const phoneNoise = await Promise.all(sentences.map((s, i) => speechThroughPhone(s, 100 + i)));
const phoneSilent = await Promise.all(sentences.map((s) => speechThroughPhone(s)));
const webCalls = await Promise.all(SCRIPTS.map((s, i) => webAudio(s, 200 + i)));
const seedPhone = await Promise.all(SEED_SENTENCES.map((s, i) => speechThroughPhone(s, i + 1)));

const webLearnt = learnt(ARGS, webCalls);
const narrowSeed = learnt(ARGS, seedPhone);
console.error(`web-learnt prior ${JSON.stringify(webLearnt)}`);
// Equal to NARROWBAND_SEED_PRIOR unless the model, the features or the phone path changed.
console.error(`narrowband seed derived again ${JSON.stringify(narrowSeed)}`);

async function variantArgs(variant: string): Promise<{ args: DecoderArgs; dir?: string }> {
  const [kind, list] = variant.split(":");
  const options = Object.fromEntries(list.split(",").map((o) => o.split("=")));
  if (kind === "args") return { args: { ...ARGS, ...options } };
  const dir = await Deno.makeTempDir({ prefix: "en-us-phone-band-" });
  const hmm = `${EN_US_MODEL_DIR}/en-us`;
  for await (const f of Deno.readDir(hmm)) {
    if (f.name !== "feat.params") await Deno.symlink(`${hmm}/${f.name}`, `${dir}/${f.name}`);
  }
  let params = await Deno.readTextFile(`${hmm}/feat.params`);
  for (const [k, v] of Object.entries(options)) {
    params = params.replace(new RegExp(`^-${k} .*$`, "m"), `-${k} ${v}`);
  }
  await Deno.writeTextFile(`${dir}/feat.params`, params);
  return { args: { ...ARGS, hmm: dir }, dir };
}

if (!VARIANTS_ONLY) {
  row("web (Opus)", "first, wideband seed", firstUtterances(ARGS, SEED_PRIOR, web));
  row("web (Opus)", "later", laterUtterances(ARGS, SEED_PRIOR, web));
  const lines = [["phone, line noise", phoneNoise], ["phone, digital silence", phoneSilent]];
  for (const [name, audios] of lines as [string, Int16Array[]][]) {
    row(name, "first, wideband seed", firstUtterances(ARGS, SEED_PRIOR, audios));
    row(name, "first, web-learnt prior", firstUtterances(ARGS, webLearnt, audios));
    row(name, "first, narrowband seed", firstUtterances(ARGS, NARROWBAND_SEED_PRIOR, audios));
    row(name, "first, cold + 2nd pass", firstUtterances(ARGS, null, audios));
    row(name, "later", laterUtterances(ARGS, NARROWBAND_SEED_PRIOR, audios));
  }
}

if (!VARIANTS_ONLY) {
  const before = callsInTurn("wideband", web, phoneNoise);
  const after = callsInTurn("narrowband", web, phoneNoise);
  row("web (Opus)", "first, web and phone calls in turn, one prior (before)", before.web);
  row("phone, line noise", "first, web and phone calls in turn, one prior (before)", before.phone);
  row("web (Opus)", "first, web and phone calls in turn, a prior per channel", after.web);
  row("phone, line noise", "first, web and phone calls in turn, a prior per channel", after.phone);
}

for (const variant of VARIANTS) {
  const { args, dir } = await variantArgs(variant);
  const seed = learnt(args, seedPhone);
  console.error(`narrowband seed with ${variant} ${JSON.stringify(seed)}`);
  row(
    "phone, line noise",
    `first, ${variant}, its narrowband seed`,
    firstUtterances(args, seed, phoneNoise),
  );
  row("phone, line noise", `later, ${variant}`, laterUtterances(args, seed, phoneNoise));
  if (dir) await Deno.remove(dir, { recursive: true });
}

console.log(`\n${sentences.length} ${HELD ? "HELD" : "DEV"}_SCRIPTS sentences, festival\n`);
console.log("| audio | condition | WER | finish (mean) |");
console.log("| --- | --- | ---: | ---: |");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);
console.log(`\n(${((performance.now() - started) / 1000).toFixed(0)} s)`);
