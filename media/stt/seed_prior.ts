// The CMN prior a recognition thread starts from before any call has taught it one.
//
// Pocketsphinx normalises a call's first utterance by a prior (pocketsphinx_decoding.ts); the
// model's own (feat.params' -cmninit) fits Opus-decoded speech so badly that a first utterance
// starting from it gets a second, batch-CMN pass over its audio, which the caller waits for at the
// end of their first turn (issue 23: first turn 691-1,156 ms against 438-536 ms later, on a fresh
// node). The thread's learnt prior avoids that pass, but a fresh thread has learnt nothing.
//
// This seed is what a thread learns from SEED_SENTENCES spoken by festival's kal voice (a diphone
// voice cut from a human speaker's recordings, the nearest to a caller that ships here) with a
// 1-LSB dither for a caller's noise floor, Opus encoded at 48 kHz and decoded at 16 kHz as a
// call's audio is. It is the first calls' stand-in:
// the first call's own estimate replaces it whole. Measured on 24 festival test sentences as
// first utterances (scratch run, see docs/decisions.md): WER 7.9 % from this seed against 9.0 %
// cold with the second pass, finish 51 against 281 ms; a seed learnt from espeak-ng's formant
// voice instead read 20.3 %, so the worker cannot make its own from its synthesis engine.
// seed_prior.test.ts derives it again (festival, in CI) and keeps this copy equal to it.

/** What the seed is learnt from: sentences in no test script, each one call's first utterance. */
export const SEED_SENTENCES = [
  "Hello, I am calling about the letter you sent me last week.",
  "Could you tell me when the office opens on Monday morning?",
  "Yes, that works for me, thank you so much for your help.",
  "I would like to change the address on my account, please.",
] as const;

/** The en-us model's 13 cepstral means after those calls (running mean of their estimates). */
export const SEED_PRIOR: readonly number[] = [
  50.58,
  10.89,
  -0.48,
  11.95,
  -8.91,
  -2.4,
  2.82,
  -5.67,
  -0.33,
  -0.76,
  3.39,
  -1.04,
  0.22,
];

/**
 * The same derivation over a phone line instead of Opus: SEED_SENTENCES by festival at 8 kHz
 * with a noise floor of one μ-law step, G.711 μ-law, and the worker's CallerEdge back to 16 kHz
 * (tests/helpers/phone_speech.ts). A phone call's first utterance starts from it (channel
 * "narrowband"): with nothing above 3.4 kHz the upper filters see only the floor, so the mean is
 * far from SEED_PRIOR's (c1 +20, c2 -32), and a first utterance from the wideband seed reads
 * badly (docs/decisions.md, bench/media/phone_recognition.ts). seed_prior.test.ts derives it again.
 */
export const NARROWBAND_SEED_PRIOR: readonly number[] = [
  45.24,
  31.34,
  -32.65,
  37.92,
  -23.49,
  -3.24,
  16.09,
  -24.77,
  16.3,
  -7.95,
  -1.04,
  11.59,
  -15.27,
];
