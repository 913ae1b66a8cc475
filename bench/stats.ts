/** Min, median and max of repeated measurements: the spread the bench reports. */
export interface Spread {
  min: number;
  median: number;
  max: number;
  samples: number[];
}

export function spread(samples: number[]): Spread {
  if (samples.length === 0) throw new Error('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median =
    sorted.length % 2 === 1
      ? (sorted[Math.floor(middle)] ?? 0)
      : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { min: sorted[0] ?? 0, median, max: sorted.at(-1) ?? 0, samples };
}

/** "median (min–max)", each through `format`. */
export function showSpread(value: Spread, format: (n: number) => string): string {
  const [median, min, max] = [format(value.median), format(value.min), format(value.max)];
  return min === max ? median : `${median} (${min}–${max})`;
}

/**
 * Whether a spread meets a target: by every repetition, by its median only (the target is
 * met in the middle but not always), or not.
 */
export function meets(value: Spread, ok: (n: number) => boolean): 'yes' | 'median only' | 'no' {
  const all = value.samples.every(ok);
  if (all) return 'yes';
  return ok(value.median) ? 'median only' : 'no';
}

/**
 * Whether a guard on the median holds: a guard is not a target every repetition must reach
 * (the machine's spread puts single repetitions on either side), only the middle.
 */
export function medianMeets(value: Spread, ok: (n: number) => boolean): 'yes' | 'no' {
  return ok(value.median) ? 'yes' : 'no';
}

export const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;
export const thousands = (n: number) => Math.round(n).toLocaleString('en');
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
