// A paused turn spoken as one utterance, as a caller says it: the synthesiser is given the whole
// turn with a break at each pause (espeak-ng SSML `<break time>` with -m; festival SABLE
// `<BREAK LEVEL="LARGE"/>`, whose length festival fixes at ~460 ms), so the voice before a pause
// is the voice of an unfinished sentence, not a statement's fall (each phrase spoken alone ends
// in one). The breaks are then found in the audio by energy (the longest quiet runs: the break's
// silence is far longer than any stop consonant's) and the turn is cut there into its phrases,
// which data.ts joins with the pauses it chooses, so the key stays exact to a sample.

/** Below this (16-bit; 0.5 % of full scale, sox's trim threshold) a sample is quiet. */
export const QUIET = 164;
/** A quiet run at least this long (ms) may be a break; stops and gaps are well under it. */
export const MIN_BREAK_MS = 150;

const escapeXml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** espeak-ng SSML (run with -m): the phrases with a 600 ms break between each two. */
export function ssmlOf(phrases: string[]): string {
  return `<speak>${phrases.map(escapeXml).join(' <break time="600ms"/> ')}</speak>`;
}

/** festival SABLE (text2wave -mode sable): the phrases with a large break between each two. */
export function sableOf(phrases: string[]): string {
  return `<?xml version="1.0"?>\n<!DOCTYPE SABLE PUBLIC "-//SABLE//DTD SABLE speech mark up//EN" ` +
    `"Sable.v0_2.dtd" []>\n<SABLE>${
      phrases.map(escapeXml).join(' <BREAK LEVEL="LARGE"/> ')
    }</SABLE>\n`;
}

/**
 * Cuts an utterance (trimmed at both ends) into `count` phrases at its `count - 1` longest quiet
 * runs; each phrase runs from its first loud sample to its last, as a phrase spoken alone and
 * trimmed would. Refuses audio with fewer breaks than asked (the synthesiser dropped one).
 */
export function splitAtBreaks(pcm: Int16Array, count: number, rate = 16000): Int16Array[] {
  if (count < 1) throw new Error("an utterance has at least one phrase");
  const minRun = Math.round((MIN_BREAK_MS * rate) / 1000);
  const runs: { start: number; end: number }[] = [];
  let quietFrom = -1;
  for (let i = 0; i <= pcm.length; i++) {
    const quiet = i < pcm.length && Math.abs(pcm[i]) < QUIET;
    if (quiet && quietFrom < 0) quietFrom = i;
    else if (!quiet && quietFrom >= 0) {
      // A run touching either end is the synthesiser's lead or tail, not a break.
      if (quietFrom > 0 && i < pcm.length && i - quietFrom >= minRun) {
        runs.push({ start: quietFrom, end: i });
      }
      quietFrom = -1;
    }
  }
  if (runs.length < count - 1) {
    throw new Error(`${count} phrases need ${count - 1} breaks; the audio has ${runs.length}`);
  }
  const breaks = runs.sort((a, b) => (b.end - b.start) - (a.end - a.start)).slice(0, count - 1)
    .sort((a, b) => a.start - b.start);
  const firstLoud = pcm.findIndex((s) => Math.abs(s) >= QUIET);
  let lastLoud = pcm.length - 1;
  while (lastLoud > 0 && Math.abs(pcm[lastLoud]) < QUIET) lastLoud--;
  const bounds = [firstLoud, ...breaks.flatMap((b) => [b.start, b.end]), lastLoud + 1];
  const phrases: Int16Array[] = [];
  for (let i = 0; i < bounds.length; i += 2) phrases.push(pcm.slice(bounds[i], bounds[i + 1]));
  return phrases;
}
