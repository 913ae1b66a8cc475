import type { BudgetStop, RunBudget } from './budget.ts';
import type { DeliveryResult } from './classify.ts';
import { batchSize, type DeliveryPlan, type Planned } from './delivery-plan.ts';
import { deliveryKey, deliveryOp } from './idempotency.ts';
import {
  type DeliveryItem,
  type FailingUpdate,
  ledgerKey,
  type RunContext,
  type Update,
} from './ports.ts';
import type { ChangesJudge } from './unchanged.ts';
import type { Handled } from './window-memory.ts';

/** How delivering one page's updates went. */
export interface PageDelivery {
  /** Delivered now (for the ledger). */
  delivered: Update[];
  /** deliver.changes_only: their content the one the receiver last got, so not sent. */
  unchanged: Update[];
  /** The updates that are handled: delivered, unchanged or dead-lettered (for HandledKeys). */
  handled: Handled[];
  /** Updates still failing after this run, with why. */
  retryable: string[];
  deadLettered: number;
  /** Handled updates that had been held back (by the budget, or behind an older version). */
  released: number;
  /** Set when the receiver is misconfigured (401/403/404): the run stops. */
  misconfigured?: string;
  /** Set when the budget ran out before every update had its turn. */
  stop?: BudgetStop;
  fenced?: boolean;
}

/**
 * The oldest version still failing, per id, across the pages and runs of a window: a newer
 * version of that id waits for it, so the receiver never gets two versions out of order.
 */
export type OlderFailing = Map<string, number>;

/**
 * Seeds OlderFailing from the failures stored by earlier runs (and `others`: another
 * stream's failures its versions must wait for too).
 */
export function olderFailing(
  failing: Map<string, FailingUpdate>,
  others: Iterable<FailingUpdate> = [],
): OlderFailing {
  const oldest: OlderFailing = new Map();
  for (const failure of [...failing.values(), ...others]) {
    oldest.set(
      failure.id,
      Math.min(oldest.get(failure.id) ?? Number.POSITIVE_INFINITY, failure.versionMs),
    );
  }
  return oldest;
}

/** What the batches of one page's delivery share. */
interface PageRun {
  ctx: RunContext;
  epoch: number;
  failing: Map<string, FailingUpdate>;
  older: OlderFailing;
  budget: RunBudget;
  judge: ChangesJudge | null;
  result: PageDelivery;
}

/**
 * Delivers a page's new updates: in rounds (the n-th version of every id in round n, so
 * two versions of one id are never in flight together and the older goes first), each round
 * in batches of `deliver.batch`, up to `deliver.concurrency` batches at once. A version
 * waits while an older one of its id is failing. With deliver.changes_only, a version whose
 * turn has come is first judged against what the receiver last got of its id (`judge`,
 * engine/unchanged.ts). A failed update counts an attempt; at `max_attempts` it becomes a
 * dead letter and counts as handled (R8).
 */
export async function deliverPage(
  ctx: RunContext,
  epoch: number,
  plan: DeliveryPlan,
  failing: Map<string, FailingUpdate>,
  older: OlderFailing,
  budget: RunBudget,
  judge: ChangesJudge | null = null,
): Promise<PageDelivery> {
  const result: PageDelivery = {
    delivered: [],
    unchanged: [],
    handled: [],
    retryable: [],
    deadLettered: 0,
    released: 0,
  };
  const page: PageRun = { ctx, epoch, failing, older, budget, judge, result };
  const size = batchSize(ctx);
  const concurrency = ctx.config.deliver.concurrency;
  const done = () => Boolean(result.stop || result.misconfigured || result.fenced);

  for (const round of plan.rounds) {
    const ready: Planned[] = [];
    for (const planned of round) {
      const { update } = planned;
      const oldest = older.size === 0 ? undefined : older.get(update.id);
      if (oldest !== undefined && oldest < update.versionMs) {
        if (!hold(page, update, waiting(update))) break;
      } else if (judge?.unchanged(update, planned.key)) settle(page, planned, true);
      else ready.push(planned);
      if (result.fenced) break;
    }
    if (result.fenced) break;
    const batches = chunk(ready, size);
    let next = 0;
    const worker = async () => {
      while (next < batches.length && !done()) {
        const batch = batches[next++] ?? [];
        await deliverBatch(page, batch);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
    if (done()) break;
  }
  if (result.stop && !result.fenced) keepUndelivered(page, plan.updates);
  return result;
}

/**
 * The budget ran out with part of a fetched page not delivered. Those updates are kept, with
 * their records, like failing ones (no attempt spent): the next run delivers them in the
 * version that was served, even if the upstream has moved on to a newer one by then.
 */
function keepUndelivered(page: PageRun, updates: Planned[]): void {
  const why = 'fetched, but not delivered before the run stopped on its budget';
  const handled = new Set(page.result.handled.map((entry) => entry.key));
  for (const { update, key } of updates) {
    const failure = deliveryKey(page.ctx, update);
    if (handled.has(key) || page.failing.has(failure)) continue;
    if (!hold(page, update, why)) return;
  }
}

function waiting(update: Update): string {
  return `waits for an older version of ${update.id}`;
}

async function deliverBatch(page: PageRun, batch: Planned[]): Promise<void> {
  const { ctx, epoch, failing, result } = page;
  const stop = page.budget.take(ctx.now());
  if (stop) {
    result.stop = stop;
    return;
  }
  const items: DeliveryItem[] = batch.map(({ update }) => {
    const key = deliveryKey(ctx, update);
    const before = failing.size === 0 ? undefined : failing.get(key);
    const op = deliveryOp(ctx, update);
    return { update, op, idempotencyKey: key, attempt: (before?.attempts ?? 0) + 1 };
  });
  // The run's first effect outside the object: from here, its death must be recovered (R5).
  if (!ctx.store.persistLease(epoch)) {
    result.fenced = true;
    return;
  }
  const outcome = await ctx.deliverer.deliver(items);
  if (!ctx.store.holds(epoch)) {
    result.fenced = true;
    return;
  }
  if (outcome.kind === 'misconfigured') {
    result.misconfigured ??= outcome.error;
    return;
  }
  const deliveredCount =
    outcome.kind === 'delivered' ? items.length : (outcome.deliveredPrefix ?? 0);
  for (let i = 0; i < deliveredCount; i += 1) {
    const planned = batch[i];
    if (planned) settle(page, planned, false);
  }
  if (deliveredCount === items.length || outcome.kind === 'delivered') return;
  const refused = items.slice(deliveredCount);
  // One record a receiver rejects must not take its batch-mates down with it: on a 4xx for
  // a batch, each record is tried alone before any attempt is counted.
  if (outcome.kind === 'rejected' && refused.length > 1) {
    for (const planned of batch.slice(deliveredCount)) {
      if (result.stop || result.fenced || result.misconfigured) return;
      await deliverBatch(page, [planned]);
    }
    return;
  }
  for (const item of refused) settleFailed(page, item, outcome);
}

/**
 * An update is handled: delivered now, or (`unchanged`) not sent, its content the one the
 * receiver last got. A failure it had (an earlier attempt, or a hold) is over.
 */
function settle(page: PageRun, { update, key }: Planned, unchanged: boolean): void {
  const { ctx, epoch, failing, result } = page;
  if (unchanged) result.unchanged.push(update);
  else {
    result.delivered.push(update);
    page.judge?.sent(update, key);
  }
  const failure = failing.size === 0 ? undefined : deliveryKey(ctx, update);
  const before = failure === undefined ? undefined : failing.get(failure);
  // A version that was failing is often retried out of its place (on the window's first
  // page): known for the whole window, so its own page does not deliver it again.
  const keep = before === undefined ? update.versionMs : Number.POSITIVE_INFINITY;
  result.handled.push({ key, keep });
  if (failure !== undefined && before !== undefined && failing.delete(failure)) {
    if (before.attempts === 0) result.released += 1;
    if (!ctx.store.clearFailure(epoch, failure)) result.fenced = true;
    forgetOlder(update.id, failing, page.older);
  }
}

/**
 * A version that waits for an older one of its id is stored like a failing one (with no
 * attempt spent): if the upstream moves on past it before the older one gets through, it is
 * still retried from its record, or kept as a dead letter, never silently lost.
 */
function hold(page: PageRun, update: Update, why: string): boolean {
  const { ctx, failing, result } = page;
  const key = deliveryKey(ctx, update);
  const before = failing.get(key);
  const now = ctx.now();
  const held: FailingUpdate = {
    key,
    id: update.id,
    version: update.version,
    versionMs: update.versionMs,
    record: update.record,
    attempts: before?.attempts ?? 0,
    firstFailure: before?.firstFailure ?? now,
    lastFailure: now,
    lastError: before?.lastError ?? why,
    ...parentOf(update),
  };
  failing.set(key, held);
  result.retryable.push(`${update.id}@${update.version}: ${why}`);
  if (ctx.store.recordFailure(page.epoch, held)) return true;
  result.fenced = true;
  return false;
}

/** An older version was handled: the next one of its id may go once no older one fails. */
function forgetOlder(id: string, failing: Map<string, FailingUpdate>, older: OlderFailing): void {
  const rest = [...failing.values()].filter((failure) => failure.id === id);
  if (rest.length === 0) older.delete(id);
  else older.set(id, Math.min(...rest.map((failure) => failure.versionMs)));
}

function settleFailed(
  page: PageRun,
  item: DeliveryItem,
  outcome: Exclude<DeliveryResult, { kind: 'delivered' }>,
): void {
  const { ctx, epoch, failing, older, result } = page;
  const { update } = item;
  const before = failing.get(item.idempotencyKey);
  const now = ctx.now();
  let written: boolean;
  if (item.attempt >= ctx.config.max_attempts) {
    written = ctx.store.deadLetter(epoch, {
      key: item.idempotencyKey,
      kind: 'delivery',
      id: update.id,
      version: update.version,
      versionMs: update.versionMs,
      record: update.record,
      error: outcome.error,
      attempts: item.attempt,
      firstFailure: before?.firstFailure ?? now,
      lastFailure: now,
      ...parentOf(update),
    });
    failing.delete(item.idempotencyKey);
    forgetOlder(update.id, failing, older);
    // Known for the whole window, whatever its version: delivered again by a repeat on a
    // later page, a poison record would start over at attempt 1.
    result.handled.push({
      key: ledgerKey(update.id, update.version),
      keep: Number.POSITIVE_INFINITY,
    });
    result.deadLettered += 1;
  } else {
    const failure: FailingUpdate = {
      key: item.idempotencyKey,
      id: update.id,
      version: update.version,
      versionMs: update.versionMs,
      record: update.record,
      attempts: item.attempt,
      firstFailure: before?.firstFailure ?? now,
      lastFailure: now,
      lastError: outcome.error,
      ...parentOf(update),
    };
    written = ctx.store.recordFailure(epoch, failure);
    failing.set(item.idempotencyKey, failure);
    older.set(
      update.id,
      Math.min(older.get(update.id) ?? Number.POSITIVE_INFINITY, update.versionMs),
    );
    result.retryable.push(
      `${update.id}@${update.version} (attempt ${item.attempt}): ${outcome.error}`,
    );
  }
  if (!written) result.fenced = true;
}

/** source.children: a child's parent, kept with its failure or dead letter for its envelope. */
function parentOf(update: Update): { parent?: string } {
  return update.parent === undefined ? {} : { parent: update.parent };
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
