/**
 * A ratio of two servers' figures as the bench reports it: the median of the rounds' own ratios (a round's two
 * runs are adjacent in time, so that a slow spell of this shared machine slows both and cancels out of their
 * ratio), with the rounds' spread, min-max of the same ratios, so that a reader sees how far one figure moves.
 */
export interface Ratio {
  median: number;
  min: number;
  max: number;
  rounds: number[];
}

export function ratioOf(rounds: number[]): Ratio {
  const sorted = [...rounds].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length === 0 ? Number.NaN : sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN, rounds };
}

/** Round by round, `of(a)` over `of(b)`: `a` and `b` are one server's measurements each, round i beside round i. */
export function pairedRatio<T>(a: T[], b: T[], of: (m: T) => number): Ratio {
  return ratioOf(a.map((m, round) => of(m) / Math.max(of(b[round]!), 1e-9)));
}

/** `0.93 (0.88-0.97)`: the median, then the rounds' spread; `digits` for both. */
export function ratioText(ratio: Ratio, digits = 2): string {
  if (!Number.isFinite(ratio.median)) return 'n/a';
  return `${ratio.median.toFixed(digits)} (${ratio.min.toFixed(digits)}-${ratio.max.toFixed(digits)})`;
}
