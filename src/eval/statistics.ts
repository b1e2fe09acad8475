/**
 * Confidence intervals for the eval's per-arm numbers: Wilson score intervals for rates (task
 * success, recovery after a failure), percentile bootstrap intervals for means (wasted calls,
 * tokens per success). Pure; the bootstrap takes its randomness as a parameter (seeded in tests).
 */

/** A point estimate with its interval (both bounds inclusive). */
export interface Interval {
  estimate: number;
  low: number;
  high: number;
}

/**
 * The Wilson score interval of a binomial proportion: `successes` of `trials`, at the confidence
 * of the normal quantile `z` (1.96 ≈ 95 %). Unlike the normal approximation it stays inside [0, 1]
 * and is usable at 0 or `trials` successes. No trials: estimate 0, interval [0, 1].
 *
 * @throws RangeError when the counts are not integers with 0 ≤ successes ≤ trials.
 */
export function wilsonInterval(successes: number, trials: number, z = 1.96): Interval {
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || successes > trials) {
    throw new RangeError(`wilsonInterval: expected integers 0 <= successes <= trials, received ${successes} of ${trials}`);
  }
  if (trials === 0) return { estimate: 0, low: 0, high: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const margin = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { estimate: p, low: Math.max(0, centre - margin), high: Math.min(1, centre + margin) };
}

/**
 * The percentile bootstrap interval of the mean of `values`: `resamples` resamples with
 * replacement drawn with `random` (a function returning [0, 1)), the `(1 − level) / 2` and
 * `(1 + level) / 2` quantiles of their means. No values: `NaN` everywhere; one value: a point.
 */
export function bootstrapMeanInterval(values: readonly number[], random: () => number, options: { resamples?: number; level?: number } = {}): Interval {
  const n = values.length;
  if (n === 0) return { estimate: Number.NaN, low: Number.NaN, high: Number.NaN };
  const mean = values.reduce((sum, value) => sum + value, 0) / n;
  if (n === 1) return { estimate: mean, low: mean, high: mean };
  const resamples = options.resamples ?? 2_000;
  const level = options.level ?? 0.95;
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r += 1) {
    let sum = 0;
    for (let i = 0; i < n; i += 1) sum += values[Math.floor(random() * n)]!;
    means[r] = sum / n;
  }
  means.sort();
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))]!;
  return { estimate: mean, low: at((1 - level) / 2), high: at((1 + level) / 2) };
}

/**
 * The percentile bootstrap interval of a ratio of sums, `Σ numerators / Σ denominators` (e.g.
 * tokens spent per successful task): pairs are resampled with replacement, as in
 * {@link bootstrapMeanInterval}. Resamples whose denominator sums to 0 are left out of the
 * quantiles. A denominator summing to 0 overall: `NaN` everywhere.
 */
export function bootstrapRatioInterval(
  pairs: ReadonlyArray<{ numerator: number; denominator: number }>,
  random: () => number,
  options: { resamples?: number; level?: number } = {},
): Interval {
  const n = pairs.length;
  const total = pairs.reduce((sum, pair) => ({ numerator: sum.numerator + pair.numerator, denominator: sum.denominator + pair.denominator }), {
    numerator: 0,
    denominator: 0,
  });
  if (n === 0 || total.denominator === 0) return { estimate: Number.NaN, low: Number.NaN, high: Number.NaN };
  const estimate = total.numerator / total.denominator;
  const resamples = options.resamples ?? 2_000;
  const level = options.level ?? 0.95;
  const ratios: number[] = [];
  for (let r = 0; r < resamples; r += 1) {
    let numerator = 0;
    let denominator = 0;
    for (let i = 0; i < n; i += 1) {
      const pair = pairs[Math.floor(random() * n)]!;
      numerator += pair.numerator;
      denominator += pair.denominator;
    }
    if (denominator > 0) ratios.push(numerator / denominator);
  }
  ratios.sort((a, b) => a - b);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.max(0, Math.floor(q * ratios.length)))]!;
  return { estimate, low: at((1 - level) / 2), high: at((1 + level) / 2) };
}
