/**
 * The CLI's exit codes, for a CI job to branch on. 2 is `terraform plan -detailed-exitcode`'s
 * "there are changes": a plan step can fail a job, or open a pull request, on drift alone.
 */
export const EXIT = {
  /** Done: the fleet is in sync, the changes were applied, the command succeeded. */
  ok: 0,
  /** Anything went wrong: a bad argument or file, a missing variable, an HTTP failure. */
  error: 1,
  /** `apply` without `--yes`: the plan has changes, and nothing was changed. */
  changes: 2,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
