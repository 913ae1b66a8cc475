import { formatDuration } from './config/duration.ts';

/**
 * Deadlines for outbound work (upstream pages, deliveries), with one timer each that is
 * always cleared, or one timer per DeadlineClock (the hot paths). `AbortSignal.timeout` leaves its timer armed until it fires, and workerd
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
    stop = onCancel(cancel, end);
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

/** Ends a deadline at once when `cancel` aborts (work no longer wanted); returns the unhook. */
function onCancel(cancel: AbortSignal | undefined, end: (reason: unknown) => void): () => void {
  if (!cancel) return () => {};
  const cancelled = () => end(cancel.reason);
  if (cancel.aborted) cancelled();
  else cancel.addEventListener('abort', cancelled, { once: true });
  return () => cancel.removeEventListener('abort', cancelled);
}

/**
 * Deadlines of one length that share one timer, for the hot paths (a source's pages, a
 * webhook's batches): a timer per request costs a setTimeout and a clearTimeout each, this
 * an entry in a Set while requests overlap. The timer waits for the oldest pending deadline
 * (all have the same length, so the oldest is the first in the Set), is set again when it
 * fires for the next one, and is cleared as soon as none is pending: no timer outlives the
 * work, and an object with nothing to do has none armed.
 */
/** A deadline a clock waits for: when it passes, and what it does then. */
interface Pending {
  at: number;
  end: (reason: unknown) => void;
}

export class DeadlineClock {
  private readonly pending = new Set<Pending>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Runs holding the clock: its timer stays armed between their requests. */
  private holds = 0;

  constructor(readonly ms: number) {}

  /** A deadline `ms` from now; one that `cancel` aborts comes at once (see startDeadline). */
  start(cancel?: AbortSignal): Deadline {
    const controller = new AbortController();
    let stop = () => {};
    const entry: Pending = { at: Date.now() + this.ms, end: () => {} };
    const expired = new Promise<typeof TIMED_OUT>((resolve) => {
      entry.end = (reason) => {
        this.drop(entry);
        stop();
        controller.abort(reason);
        resolve(TIMED_OUT);
      };
    });
    this.pending.add(entry);
    if (this.timer === undefined) this.arm(entry.at);
    // Held, the timer may wait for a deadline already gone: it fires, then waits for this one.
    stop = onCancel(cancel, entry.end);
    return {
      signal: controller.signal,
      expired,
      clear: () => {
        this.drop(entry);
        stop();
      },
    };
  }

  /**
   * Keeps the timer armed from one request to the next until released (a run's length): a
   * run of sequential requests then arms it about once per `ms`, not once per request. Once
   * released with nothing pending, no timer is left: a pending timer keeps an object alive.
   */
  hold(): () => void {
    this.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds -= 1;
      if (this.holds === 0 && this.pending.size === 0) this.disarm();
    };
  }

  /** Runs `work` under a deadline from this clock (see withDeadline). */
  async run<T>(work: (signal: AbortSignal) => Promise<T>): Promise<Deadlined<T>> {
    return raceDeadline(this.start(), this.ms, work);
  }

  private drop(entry: Pending): void {
    if (!this.pending.delete(entry) || this.pending.size > 0 || this.holds > 0) return;
    this.disarm();
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(at: number): void {
    // Date.now() in workerd moves with I/O: at least 1 ms, so a timer never spins.
    this.timer = setTimeout(() => this.fire(), Math.max(1, at - Date.now()));
  }

  private fire(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const entry of this.pending) {
      if (entry.at > now) {
        this.arm(entry.at);
        return;
      }
      entry.end(new DOMException(`timed out after ${formatDuration(this.ms)}`, 'TimeoutError'));
    }
  }
}

/** How work under a deadline went: its value, or the deadline came first. */
export type Deadlined<T> = { timedOut: false; value: T } | { timedOut: true; error: string };

/**
 * Runs `work` under a deadline of `ms` (`deliver.timeout`): it gets a signal that aborts at
 * the deadline, and the result says `timed out after <ms>` if the deadline comes first. This
 * is what keeps a run within `max_run` + one timeout, the bound `lease_ttl` is checked
 * against (R5).
 */
export function withDeadline<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<Deadlined<T>> {
  return raceDeadline(startDeadline(ms), ms, work);
}

async function raceDeadline<T>(
  deadline: Deadline,
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<Deadlined<T>> {
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
