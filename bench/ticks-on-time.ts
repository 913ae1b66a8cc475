/**
 * The fleet benchmark's on-time figures, from when each poller asked the upstream for a page
 * (the upstream's own log: reading it wakes no poller).
 */
export interface OnTime {
  tickCount: number;
  /** Ticks within `allowedMs` of the one before (or of the start of the watch, for the first). */
  onTime: number;
  /** Pollers that never ticked while watched. */
  silent: number;
  /** Pollers every one of whose ticks came on time, to the end of the watch. */
  pollersOnTime: number;
}

/** Each poller's ticks (`asked`, one list per poller) between `from` and `to`, checked. */
export function ticksOnTime(
  asked: number[][],
  from: number,
  to: number,
  allowedMs: number,
): OnTime {
  const figures: OnTime = { tickCount: 0, onTime: 0, silent: 0, pollersOnTime: 0 };
  for (const times of asked) {
    const starts = times.filter((at) => at >= from && at <= to);
    if (starts.length === 0) figures.silent += 1;
    figures.tickCount += starts.length;
    let previous = from;
    let late = 0;
    for (const start of starts) {
      if (start - previous <= allowedMs) figures.onTime += 1;
      else late += 1;
      previous = start;
    }
    // And from its last tick to the end of the watch: no tick may be missing at the end.
    if (to - previous > allowedMs) late += 1;
    if (late === 0 && starts.length > 0) figures.pollersOnTime += 1;
  }
  return figures;
}
