/**
 * A per-request deadline that is always cleared. `AbortSignal.timeout` leaves its timer armed
 * until it fires, and workerd caps an isolate at 10,000 active timeouts: a long run of fast
 * requests would hit that cap. This timer is cleared as soon as the request is done.
 */
export interface Deadline {
  signal: AbortSignal;
  /** Resolves when the deadline passes; pair it with the work in `Promise.race`. */
  expired: Promise<typeof TIMED_OUT>;
  clear(): void;
}

/** What `expired` resolves to, so a race can tell the deadline from the work. */
export const TIMED_OUT = Symbol('timed out');

export function startDeadline(ms: number): Deadline {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException('timed out', 'TimeoutError'));
      resolve(TIMED_OUT);
    }, ms);
  });
  return { signal: controller.signal, expired, clear: () => clearTimeout(timer) };
}
