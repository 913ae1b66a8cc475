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
}

export interface WindowPlan {
  checkpoint: number;
  overlap: number;
  /** Only with a bounded source; undefined means one window up to T. */
  maxWindow: number | undefined;
  bounded: boolean;
  now: number;
  /** The source's time step in ms: a bounded end is floored to it, so it is sent exactly. */
  precision?: number;
}

/** Plans the next window from the checkpoint: `from = C − overlap`, `to = min(from + max_window, T)`. */
export function planWindow(plan: WindowPlan): Window {
  const from = plan.checkpoint - plan.overlap;
  const step = plan.precision ?? 1;
  // Floored, never rounded up: C may reach `to`, so `to` must be what the upstream was sent.
  const floor = (at: number) => Math.floor(at / step) * step;
  const cut =
    plan.bounded && plan.maxWindow !== undefined && from + plan.maxWindow < floor(plan.now);
  const end = cut ? from + (plan.maxWindow ?? 0) : plan.now;
  const to = plan.bounded ? floor(end) : end;
  return { from, to: Math.max(from, to), bounded: plan.bounded, startedAt: plan.now, cut };
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
