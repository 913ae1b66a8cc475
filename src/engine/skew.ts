/** The precision of an HTTP `Date` header: skew within this is noise, not a finding. */
export const SKEW_RESOLUTION_MS = 1_000;

/**
 * R11: a warning when the upstream's clock is off ours by more than lag_allowance (beyond
 * the ±1 s a Date header can tell). An upstream clock *behind* ours stamps new updates
 * below T, where a checkpoint with too small a lag_allowance passes them.
 */
export function skewWarning(skewMs: number | null, lagAllowance: number): string | null {
  if (skewMs === null || Math.abs(skewMs) <= lagAllowance + SKEW_RESOLUTION_MS) return null;
  const seconds = Math.round(Math.abs(skewMs) / 100) / 10;
  const allowance = lagAllowance / 1000;
  return skewMs < 0
    ? `the upstream's clock is ${seconds}s behind ours, more than lag_allowance (${allowance}s): updates it stamps now can land below the checkpoint; raise lag_allowance to at least ${Math.ceil(seconds) + 1}s`
    : `the upstream's clock is ${seconds}s ahead of ours, more than lag_allowance (${allowance}s): nothing is lost, but check its clock (or ours)`;
}
