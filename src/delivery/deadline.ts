import { formatDuration } from '../config/duration.ts';

/** How work under a deadline went: its value, or the deadline came first. */
export type Deadlined<T> = { timedOut: false; value: T } | { timedOut: true; error: string };

/**
 * Runs `work` under a deadline of `ms` (`deliver.timeout`): it gets a signal that aborts at
 * the deadline, and the result says `timed out after <ms>` if the deadline comes first. This
 * is what keeps a run within `max_run` + one timeout, the bound `lease_ttl` is checked
 * against (R5). The one timer is cleared as soon as the work settles: workerd allows 10,000
 * active timers per invocation, and `AbortSignal.timeout()` keeps its timer until it fires.
 */
export async function withDeadline<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<Deadlined<T>> {
  const controller = new AbortController();
  const error = `timed out after ${formatDuration(ms)}`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Deadlined<T>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException(error, 'TimeoutError'));
      resolve({ timedOut: true, error });
    }, ms);
  });
  try {
    const done = work(controller.signal).then(
      (value): Deadlined<T> => ({ timedOut: false, value }),
    );
    return await Promise.race([done, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
