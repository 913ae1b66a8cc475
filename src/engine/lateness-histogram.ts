/**
 * A fixed-size histogram of lateness with log-spaced buckets: 8 per doubling (the bucket
 * bounds of a Prometheus native histogram of schema 3), from 1/128 s to 2^17 s (36 h), so
 * any quantile read from it is within about 4% of the true one, however wide the spread,
 * and its size never grows with the number of records (at most BUCKET_COUNT counters).
 */

/** Buckets per doubling of the lateness. */
export const BUCKETS_PER_OCTAVE = 8;

/** Bucket 0 ends at 2^-7 s (7.8 ms) and holds everything below. */
const OFFSET = 7 * BUCKETS_PER_OCTAVE;

/** The last bucket ends at 2^17 s (about 36 h) and holds everything beyond. */
export const BUCKET_COUNT = OFFSET + 17 * BUCKETS_PER_OCTAVE + 1;

/** Counts by bucket index, kept sparse: a histogram is stored as this object's JSON. */
export type Buckets = Record<string, number>;

/** Lateness seen: how many, their sum and maximum, and how they spread (bucket counts). */
export interface LatenessHistogram {
  buckets: Buckets;
  count: number;
  sumMs: number;
  maxMs: number;
  /** Of those, records found only because of `overlap`: later than lag_allowance (near misses). */
  nearMisses: number;
}

export function emptyHistogram(): LatenessHistogram {
  return { buckets: {}, count: 0, sumMs: 0, maxMs: 0, nearMisses: 0 };
}

/** The upper bound (inclusive) of bucket `index`, in ms. */
export function upperBoundMs(index: number): number {
  return 1000 * 2 ** ((index - OFFSET) / BUCKETS_PER_OCTAVE);
}

/** The bucket a lateness falls in: the first whose upper bound is at or above it. */
export function bucketOf(ms: number): number {
  if (!(ms > upperBoundMs(0))) return 0;
  // The small epsilon keeps a value exactly on a bound in that bound's bucket (le semantics).
  const index = Math.ceil(BUCKETS_PER_OCTAVE * Math.log2(ms / 1000) + OFFSET - 1e-9);
  return Math.min(index, BUCKET_COUNT - 1);
}

/** Adds one lateness to the histogram (in place). */
export function observe(histogram: LatenessHistogram, ms: number, nearMiss = false): void {
  const index = String(bucketOf(ms));
  histogram.buckets[index] = (histogram.buckets[index] ?? 0) + 1;
  histogram.count += 1;
  histogram.sumMs += ms;
  histogram.maxMs = Math.max(histogram.maxMs, ms);
  if (nearMiss) histogram.nearMisses += 1;
}

/** The sum of histograms, as a new one. */
export function merge(...histograms: LatenessHistogram[]): LatenessHistogram {
  const total = emptyHistogram();
  for (const histogram of histograms) {
    for (const [index, count] of Object.entries(histogram.buckets)) {
      total.buckets[index] = (total.buckets[index] ?? 0) + count;
    }
    total.count += histogram.count;
    total.sumMs += histogram.sumMs;
    total.maxMs = Math.max(total.maxMs, histogram.maxMs);
    total.nearMisses += histogram.nearMisses;
  }
  return total;
}

/**
 * The q-quantile (0 < q ≤ 1) in ms, or null when empty: the bucket holding that rank, and a
 * point inside it spaced as the buckets are (log-linear), never beyond the maximum seen.
 */
export function quantile(histogram: LatenessHistogram, q: number): number | null {
  if (histogram.count === 0) return null;
  const rank = Math.max(q * histogram.count, Number.MIN_VALUE);
  const indices = Object.keys(histogram.buckets)
    .map(Number)
    .sort((a, b) => a - b);
  let below = 0;
  for (const index of indices) {
    const count = histogram.buckets[String(index)] ?? 0;
    if (below + count >= rank) {
      const fraction = (rank - below) / count;
      const upper = upperBoundMs(index);
      const value =
        index === 0
          ? upper * fraction
          : upperBoundMs(index - 1) * (upper / upperBoundMs(index - 1)) ** fraction;
      return Math.min(value, histogram.maxMs);
    }
    below += count;
  }
  return histogram.maxMs;
}

/** How many observations are at or below `ms` (a bound of a coarser, cumulative histogram). */
export function countAtOrBelow(histogram: LatenessHistogram, ms: number): number {
  let total = 0;
  for (const [index, count] of Object.entries(histogram.buckets)) {
    if (upperBoundMs(Number(index)) <= ms * (1 + 1e-9)) total += count;
  }
  return total;
}

/** Reads a stored histogram's buckets back, dropping anything that is not a bucket count. */
export function parseBuckets(text: string): Buckets {
  const parsed: unknown = JSON.parse(text);
  const buckets: Buckets = {};
  if (parsed === null || typeof parsed !== 'object') return buckets;
  for (const [index, count] of Object.entries(parsed)) {
    const bucket = Number(index);
    if (
      Number.isInteger(bucket) &&
      bucket >= 0 &&
      bucket < BUCKET_COUNT &&
      typeof count === 'number'
    )
      buckets[index] = count;
  }
  return buckets;
}
