import { formatDuration } from './config/duration.ts';

/**
 * Deadlines for outbound work (upstream pages, deliveries), with one timer each that is
 * always cleared. `AbortSignal.timeout` leaves its timer armed until it fires, and workerd
 * caps an isolate at 10,000 active timeouts: a long run of fast requests would hit that cap.
 */

/** A deadline that several steps share (a request, then its body). */
export interface Deadline {
  signal: AbortSignal;
  /** Resolves when the deadline passes; pair it with the work in `Promise.race`. */
  expired: Promise<typeof TIMED_OUT>;
  clear(): void;
}

/** What `expired` resolves to, so a race can tell the deadline from the work. */
export const TIMED_OUT = Symbol('timed out');

/** A deadline of `ms`; one that `cancel` aborts comes at once (work no longer wanted). */
export function startDeadline(ms: number, cancel?: AbortSignal): Deadline {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stop = () => {};
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    const end = (reason: unknown) => {
      clearTimeout(timer);
      controller.abort(reason);
      resolve(TIMED_OUT);
    };
    timer = setTimeout(
      () => end(new DOMException(`timed out after ${formatDuration(ms)}`, 'TimeoutError')),
      ms,
    );
    if (cancel) {
      const onCancel = () => end(cancel.reason);
      if (cancel.aborted) onCancel();
      else cancel.addEventListener('abort', onCancel, { once: true });
      stop = () => cancel.removeEventListener('abort', onCancel);
    }
  });
  return {
    signal: controller.signal,
    expired,
    clear: () => {
      clearTimeout(timer);
      stop();
    },
  };
}

/** How work under a deadline went: its value, or the deadline came first. */
export type Deadlined<T> = { timedOut: false; value: T } | { timedOut: true; error: string };

/**
 * Runs `work` under a deadline of `ms` (`deliver.timeout`): it gets a signal that aborts at
 * the deadline, and the result says `timed out after <ms>` if the deadline comes first. This
 * is what keeps a run within `max_run` + one timeout, the bound `lease_ttl` is checked
 * against (R5).
 */
export async function withDeadline<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<Deadlined<T>> {
  const deadline = startDeadline(ms);
  try {
    const done = work(deadline.signal).then((value): Deadlined<T> => ({ timedOut: false, value }));
    const timedOut = deadline.expired.then(
      (): Deadlined<T> => ({ timedOut: true, error: `timed out after ${formatDuration(ms)}` }),
    );
    return await Promise.race([done, timedOut]);
  } finally {
    deadline.clear();
  }
}
