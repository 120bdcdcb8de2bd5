// How close one recording is to another: the lag that lines them up best, and the SNR and
// correlation at that lag. For audio that went through a codec or a resampler and back.

/** The shift of `b` against `a` (b[i + lag] ≈ a[i]) within ±maxLag samples, by cross-correlation. */
export function bestLag(a: Int16Array, b: Int16Array, maxLag: number): number {
  let best = 0, bestScore = -Infinity;
  const n = Math.min(a.length, b.length) - maxLag;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let score = 0;
    for (let i = maxLag; i < n; i++) score += a[i] * b[i + lag];
    if (score > bestScore) {
      bestScore = score;
      best = lag;
    }
  }
  return best;
}

/** SNR of `b` against `a` (dB, the error being b - a) and their correlation, at `lag`. */
export function snrDb(
  a: Int16Array,
  b: Int16Array,
  lag: number,
): { snr: number; correlation: number } {
  let signal = 0, noise = 0, ab = 0, bb = 0;
  const from = Math.max(0, -lag), to = Math.min(a.length, b.length - lag);
  for (let i = from; i < to; i++) {
    const x = a[i], y = b[i + lag];
    signal += x * x;
    noise += (y - x) * (y - x);
    ab += x * y;
    bb += y * y;
  }
  return {
    snr: 10 * Math.log10(signal / Math.max(noise, 1)),
    correlation: ab / Math.sqrt(signal * bb),
  };
}
