/** The range of upstream time one series of page requests covers: `[from, to)`. */
export interface Window {
  from: number;
  /** The end sent to the upstream when `bounded`; otherwise `T` (open-ended query). */
  to: number;
  /** True when the upstream takes an end (`to_param`), so `to` is sent with the request. */
  bounded: boolean;
  /** `T`: the Worker's clock read before the window's first request. */
  startedAt: number;
  /** max_window ended the window before T: more backlog lies beyond it. */
  cut: boolean;
  /**
   * source.resume: the window is a round of pages, started from this token (null: from
   * source.url, the first round or a resync) instead of a time range.
   */
  round?: { token: string | null };
  /**
   * source.children: the window is one parent's children, asked for with the parent's values
   * ({parent.…}) and the parent window's bounds ({from}, {to}).
   */
  parent?: ParentRef;
}

/** The parent record whose children a child listing asks for. */
export interface ParentRef {
  id: string;
  version: string;
  versionMs: number;
  record: unknown;
}

/**
 * What a source's time format can say of an instant (sources/time.ts boundPrecision): a
 * bound is sent as text that the upstream reads as `floor(at)`, never later than `at`.
 */
export interface Precision {
  /** The unit of the format, in ms (1000 for unix seconds, 60 000 for a pattern in minutes). */
  step: number;
  /** The instant the upstream reads for a bound sent for `at`: at most `at`. */
  floor(at: number): number;
}

/** A format whose bounds are whole multiples of `step` ms since the epoch (1 = exact). */
export function stepPrecision(step: number): Precision {
  return { step, floor: step === 1 ? Math.floor : (at) => Math.floor(at / step) * step };
}

const EXACT = stepPrecision(1);

export interface WindowPlan {
  checkpoint: number;
  overlap: number;
  /** Only with a bounded source; undefined means one window up to T. */
  maxWindow: number | undefined;
  bounded: boolean;
  now: number;
  /** The source's time format: every bound is floored to what it can send. */
  precision?: Precision;
}

/**
 * Plans the next window from the checkpoint: `from = C − overlap`, `to = min(from +
 * max_window, T)` for a bounded source, `T` otherwise. Both bounds are what the upstream
 * reads for the text it is sent (`precision`), floored, never rounded up: C may reach `to`
 * (R1), so `to` must be what the upstream was sent, and `from` is where it answers from.
 */
export function planWindow(plan: WindowPlan): Window {
  const precision = plan.precision ?? EXACT;
  const start = plan.checkpoint - plan.overlap;
  const from = precision.floor(start);
  const planned = { from, bounded: plan.bounded, startedAt: plan.now };
  if (!plan.bounded) return { ...planned, to: plan.now, cut: false };
  const last = precision.floor(plan.now);
  let to = last;
  if (plan.maxWindow !== undefined && plan.maxWindow > 0) {
    // A cut end read more than a unit earlier (a wall time the clocks show twice, read as
    // its first occurrence) and no later than C is moved on until it reads past C: the
    // window is longer than max_window, but its local bounds never invert and C moves.
    const stride = Math.max(plan.maxWindow, precision.step);
    for (let end = start + plan.maxWindow; end < last; end += stride) {
      const at = precision.floor(end);
      const pulledBack = at <= end - precision.step;
      if (at > from && (!pulledBack || at > plan.checkpoint)) {
        to = at;
        break;
      }
    }
  }
  return { ...planned, to: Math.max(from, to), cut: to < last };
}

/**
 * R1: when every update of a window was handled, `C ← max(C, min(to, T − lag_allowance))`.
 * Never the time a response arrived: an update stamped after T that the response missed
 * stays above the new checkpoint and is asked for again.
 */
export function nextCheckpoint(checkpoint: number, window: Window, lagAllowance: number): number {
  return Math.max(checkpoint, Math.min(window.to, window.startedAt - lagAllowance));
}

/**
 * A window that max_window cut short leaves a backlog, worth another window at once (R3):
 * only when C reached its end. A caught-up window whose end was floored to the second, or
 * whose C stopped at T − lag_allowance short of the cut, is not a backlog.
 */
export function hasBacklog(window: Window, before: number, after: number): boolean {
  return window.cut && after > before && after >= window.to;
}
