import { type OlderFailing, olderFailing } from './deliver-page.ts';
import { mainFailures, ownFailures } from './idempotency.ts';
import { type FailingUpdate, ledgerKey, type RunContext } from './ports.ts';
import { MAX_RETRYING, type Retrying, retryingOf } from './retrying.ts';

/**
 * One window's stored failing updates of its stream (R19): loaded when the window starts,
 * kept current by its deliveries, and what they allow: whether C may move past them, and
 * what the stream leaves failing for the run's outcome.
 */
export class WindowFailing {
  /** Each failing update's attempts when the window began: more now means tried in it. */
  private readonly attemptsAtStart: ReadonlyMap<string, number>;

  private constructor(
    /** This stream's own failing updates, by key; the window's deliveries update it. */
    readonly map: Map<string, FailingUpdate>,
    /** The oldest failing version per id, which a newer version of that id waits behind. */
    readonly older: OlderFailing,
  ) {
    this.attemptsAtStart = new Map([...map].map(([key, failure]) => [key, failure.attempts]));
  }

  /**
   * This stream's failing updates, stale ones cleared (a version the ledger says is handled),
   * or `fenced` when the lease was lost while clearing one.
   */
  static load(
    ctx: RunContext,
    epoch: number,
    ledger: ReadonlySet<string>,
  ): WindowFailing | 'fenced' {
    const { store } = ctx;
    // Only this stream's own failures: the deletions pass retries its deletes, the main stream
    // its updates (engine/idempotency.ts).
    const all = store.failing();
    const failing = ownFailures(ctx, all);
    // A failure of a version the ledger says is handled is stale (a repeat of a delivered or
    // dead-lettered version that failed): left, it would hold every newer version back.
    for (const [key, failure] of failing) {
      if (!ledger.has(ledgerKey(failure.id, failure.version))) continue;
      if (!store.clearFailure(epoch, key)) return 'fenced';
      failing.delete(key);
    }
    // A delete also waits for a failing update of its id that the main stream stored (R15,
    // R19): delivered first, it would be undone by that update's retry.
    const older = olderFailing(failing, ctx.stream === 'deletions' ? mainFailures(all) : undefined);
    return new WindowFailing(failing, older);
  }

  /**
   * A failing version stored with its record is no bound for C, while the store is within its
   * cap; past it, C waits below the oldest one again (R2).
   */
  stored(): boolean {
    return this.map.size <= MAX_RETRYING;
  }

  /** The versions C may not move past: none while they are stored within the cap. */
  *bounds(): Iterable<number> {
    if (this.stored()) return;
    for (const failure of this.map.values()) yield failure.versionMs;
  }

  /**
   * What the stream leaves failing (`example`: the window's first reason), for the run's
   * outcome (`partial`) and its retry; kept in `retrying` under the stream's name.
   */
  leave(
    retrying: Map<string, Retrying>,
    stream: string,
    example: string | undefined,
  ): Retrying | undefined {
    const left = retryingOf(this.map, example);
    if (left) retrying.set(stream, left);
    else retrying.delete(stream);
    return left;
  }

  /**
   * The failing versions (`id@version`, engine/ports.ts ledgerKey) this window has tried and
   * seen fail: not tried again before the next run (R19: once per run, so `max_attempts` spans
   * that many runs and their backoff), though a newer version of the id, or the overlap, shows
   * them again on a later page. A window that leaves failures ends its stream's turn
   * (engine/run.ts), so once per window is once per run.
   */
  tried(): ReadonlySet<string> {
    const tried = new Set<string>();
    for (const [key, failure] of this.map) {
      if (failure.attempts > (this.attemptsAtStart.get(key) ?? 0)) {
        tried.add(ledgerKey(failure.id, failure.version));
      }
    }
    return tried;
  }

  /** Why a window with failures may not commit: more are failing than the cap (R19), or null. */
  overCap(reason: string): string | null {
    if (this.map.size <= MAX_RETRYING) return null;
    return `${reason}; ${this.map.size} updates are failing, more than the ${MAX_RETRYING} kept while the checkpoint moves on, so it waits (R19)`;
  }
}
