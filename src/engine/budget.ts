/** Why a run stopped before finishing its work (R7). */
export type BudgetStop = 'max_run' | 'subrequests';

/**
 * R7: a run stops itself before any platform limit. Checked before each request: the wall
 * time left (`max_run`) and the subrequests left in this invocation.
 */
export class RunBudget {
  private used = 0;

  constructor(
    private readonly startedAt: number,
    private readonly maxRun: number,
    private readonly maxSubrequests: number,
  ) {}

  /** Takes one subrequest if both budgets allow it; otherwise says which one ran out. */
  take(now: number): BudgetStop | null {
    if (now - this.startedAt >= this.maxRun) return 'max_run';
    if (this.used >= this.maxSubrequests) return 'subrequests';
    this.used += 1;
    return null;
  }

  /** True once the run's wall time (max_run) is spent. */
  expired(now: number): boolean {
    return now - this.startedAt >= this.maxRun;
  }

  get subrequests(): number {
    return this.used;
  }

  /** Subrequests still allowed in this invocation. */
  get remaining(): number {
    return this.maxSubrequests - this.used;
  }
}
