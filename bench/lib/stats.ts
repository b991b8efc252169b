import type { HistogramBucket, PercentileSummary } from './results.js';

export interface LatencySummary {
  requests: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** Acks slower than 1 s, and slower than Slack's 3 s limit (Slack then retries, and shows an error on clicks). */
  over1s: number;
  over3s: number;
}

/** Linear interpolation between closest ranks (the "R-7" definition numpy and spreadsheets use). */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * fraction;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  const low = sorted[lower] as number;
  const high = sorted[upper] as number;
  return low + (high - low) * (position - lower);
}

export function summarize(latenciesMs: readonly number[], statuses: readonly number[]): LatencySummary {
  const sorted = latenciesMs.filter(Number.isFinite).sort((left, right) => left - right);
  return {
    requests: latenciesMs.length,
    errors: statuses.filter((status) => status !== 200).length,
    p50: round(percentile(sorted, 0.5)),
    p90: round(percentile(sorted, 0.9)),
    p99: round(percentile(sorted, 0.99)),
    max: round(sorted.at(-1) ?? Number.NaN),
    mean: round(sorted.reduce((sum, value) => sum + value, 0) / sorted.length),
    over1s: sorted.filter((value) => value > 1_000).length,
    over3s: sorted.filter((value) => value > 3_000).length,
  };
}

/** Median, p99 and worst of some latencies (ms, to 0.1 ms): the end-to-end figures' shape. */
export function spreadOf(values: readonly number[]): PercentileSummary {
  const sorted = [...values].sort((left, right) => left - right);
  return { p50: round(percentile(sorted, 0.5), 1), p99: round(percentile(sorted, 0.99), 1), max: round(sorted.at(-1) ?? Number.NaN, 1) };
}

/** Upper bounds (ms) of the latency histograms' buckets; the last bucket takes everything above. */
export const HISTOGRAM_BOUNDS_MS = [10, 25, 50, 100, 200, 300, 500, 750, 1_000, 2_000, 5_000] as const;

/**
 * How many of the values fall in each bucket (`upToMs` inclusive; `null` for the bucket above the
 * last bound). A value that is not a number (a stage never seen) is in no bucket.
 */
export function histogramOf(values: readonly number[]): HistogramBucket[] {
  const buckets: HistogramBucket[] = [...HISTOGRAM_BOUNDS_MS.map((upToMs) => ({ upToMs, count: 0 })), { upToMs: null, count: 0 }];
  for (const value of values.filter(Number.isFinite)) {
    const bucket = buckets.find((each) => each.upToMs === null || value <= each.upToMs);
    if (bucket) bucket.count += 1;
  }
  return buckets;
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function ratio(numerator: number, denominator: number): number {
  return round(numerator / denominator, 2);
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((left, right) => left - right), 0.5);
}
