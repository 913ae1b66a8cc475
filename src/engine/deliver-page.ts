import type { BudgetStop, RunBudget } from './budget.ts';
import type { DeliveryResult } from './classify.ts';
import { deliveryKey, deliveryOp } from './idempotency.ts';
import {
  type DeliveryItem,
  type FailingUpdate,
  ledgerKey,
  type RunContext,
  type Update,
} from './ports.ts';
import type { Handled } from './window-memory.ts';

/** How delivering one page's updates went. */
export interface PageDelivery {
  /** Delivered now (for the ledger). */
  delivered: Update[];
  /** The updates that are handled: delivered now, or dead-lettered (for HandledKeys). */
  handled: Handled[];
  /** Updates still failing after this run, with why. */
  retryable: string[];
  deadLettered: number;
  /** Delivered updates that had been held back (by the budget, or behind an older version). */
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

/** Seeds OlderFailing from the failures stored by earlier runs. */
export function olderFailing(failing: Map<string, FailingUpdate>): OlderFailing {
  const oldest: OlderFailing = new Map();
  for (const failure of failing.values()) {
    oldest.set(
      failure.id,
      Math.min(oldest.get(failure.id) ?? Number.POSITIVE_INFINITY, failure.versionMs),
    );
  }
  return oldest;
}

/** An update to deliver, with its ledger key (built once per page). */
interface Planned {
  update: Update;
  key: string;
}

/** How a page's updates go out, planned before any of them does. */
export interface DeliveryPlan {
  updates: Planned[];
  /** The n-th version of every id in round n (see deliverPage). */
  rounds: Planned[][];
  /** Requests it takes if none fails. */
  requests: number;
  /** The most requests it has in flight at once. */
  width: number;
}

/**
 * Plans the delivery of a page's new updates (with their ledger keys when the caller has
 * them: `keys[i]` is the key of `updates[i]`): its rounds, and what they take.
 */
export function planDelivery(ctx: RunContext, updates: Update[], keys?: string[]): DeliveryPlan {
  const size = batchSize(ctx);
  const pairs = updates.map((update, i) => ({
    update,
    key: keys?.[i] ?? ledgerKey(update.id, update.version),
  }));
  const planned = rounds(pairs);
  let requests = 0;
  let widest = 0;
  for (const round of planned) {
    const batches = Math.ceil(round.length / size);
    requests += batches;
    widest = Math.max(widest, batches);
  }
  return {
    updates: pairs,
    rounds: planned,
    requests,
    width: Math.min(widest, ctx.config.deliver.concurrency),
  };
}

/** Records per deliver() call: what the delivery's kind says, through its deliverer. */
function batchSize(ctx: RunContext): number {
  const { deliverer, config } = ctx;
  return deliverer.batch ?? ('batch' in config.deliver ? config.deliver.batch : 1);
}

/**
 * Delivers a page's new updates: in rounds (the n-th version of every id in round n, so
 * two versions of one id are never in flight together and the older goes first), each round
 * in batches of `deliver.batch`, up to `deliver.concurrency` batches at once. A version
 * waits while an older one of its id is failing. A failed update counts an attempt; at
 * `max_attempts` it becomes a dead letter and counts as handled (R8).
 */
export async function deliverPage(
  ctx: RunContext,
  epoch: number,
  plan: DeliveryPlan,
  failing: Map<string, FailingUpdate>,
  older: OlderFailing,
  budget: RunBudget,
): Promise<PageDelivery> {
  const result: PageDelivery = {
    delivered: [],
    handled: [],
    retryable: [],
    deadLettered: 0,
    released: 0,
  };
  const size = batchSize(ctx);
  const concurrency = ctx.config.deliver.concurrency;
  const done = () => Boolean(result.stop || result.misconfigured || result.fenced);
  const { updates } = plan;

  for (const round of plan.rounds) {
    const ready: Planned[] = [];
    for (const planned of round) {
      const { update } = planned;
      const oldest = older.size === 0 ? undefined : older.get(update.id);
      if (oldest === undefined || oldest >= update.versionMs) ready.push(planned);
      else if (!hold(ctx, epoch, update, failing, result, waiting(update))) break;
    }
    if (result.fenced) break;
    const batches = chunk(ready, size);
    let next = 0;
    const worker = async () => {
      while (next < batches.length && !done()) {
        const batch = batches[next++] ?? [];
        await deliverBatch(ctx, epoch, batch, failing, older, budget, result);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
    if (done()) break;
  }
  if (result.stop && !result.fenced) keepUndelivered(ctx, epoch, updates, failing, result);
  return result;
}

/**
 * The budget ran out with part of a fetched page not delivered. Those updates are kept, with
 * their records, like failing ones (no attempt spent): the next run delivers them in the
 * version that was served, even if the upstream has moved on to a newer one by then.
 */
function keepUndelivered(
  ctx: RunContext,
  epoch: number,
  updates: Planned[],
  failing: Map<string, FailingUpdate>,
  result: PageDelivery,
): void {
  const why = 'fetched, but not delivered before the run stopped on its budget';
  const handled = new Set(result.handled.map((entry) => entry.key));
  for (const { update, key } of updates) {
    const failure = deliveryKey(ctx, update);
    if (handled.has(key) || failing.has(failure)) continue;
    if (!hold(ctx, epoch, update, failing, result, why)) return;
  }
}

function waiting(update: Update): string {
  return `waits for an older version of ${update.id}`;
}

async function deliverBatch(
  ctx: RunContext,
  epoch: number,
  batch: Planned[],
  failing: Map<string, FailingUpdate>,
  older: OlderFailing,
  budget: RunBudget,
  result: PageDelivery,
): Promise<void> {
  const stop = budget.take(ctx.now());
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
    const item = items[i];
    const planned = batch[i];
    if (item && planned) settleDelivered(ctx, epoch, item, planned.key, failing, older, result);
  }
  if (deliveredCount === items.length || outcome.kind === 'delivered') return;
  const refused = items.slice(deliveredCount);
  // One record a receiver rejects must not take its batch-mates down with it: on a 4xx for
  // a batch, each record is tried alone before any attempt is counted.
  if (outcome.kind === 'rejected' && refused.length > 1) {
    for (const planned of batch.slice(deliveredCount)) {
      if (result.stop || result.fenced || result.misconfigured) return;
      await deliverBatch(ctx, epoch, [planned], failing, older, budget, result);
    }
    return;
  }
  for (const item of refused) settleFailed(ctx, epoch, item, outcome, failing, older, result);
}

function settleDelivered(
  ctx: RunContext,
  epoch: number,
  item: DeliveryItem,
  key: string,
  failing: Map<string, FailingUpdate>,
  older: OlderFailing,
  result: PageDelivery,
): void {
  const { update } = item;
  result.delivered.push(update);
  const before = failing.size === 0 ? undefined : failing.get(item.idempotencyKey);
  // A version that was failing is often retried out of its place (on the window's first
  // page): known for the whole window, so its own page does not deliver it again.
  const keep = before === undefined ? update.versionMs : Number.POSITIVE_INFINITY;
  result.handled.push({ key, keep });
  if (before !== undefined && failing.delete(item.idempotencyKey)) {
    if (before.attempts === 0) result.released += 1;
    if (!ctx.store.clearFailure(epoch, item.idempotencyKey)) result.fenced = true;
    forgetOlder(update.id, failing, older);
  }
}

/**
 * A version that waits for an older one of its id is stored like a failing one (with no
 * attempt spent): if the upstream moves on past it before the older one gets through, it is
 * still retried from its record, or kept as a dead letter, never silently lost.
 */
function hold(
  ctx: RunContext,
  epoch: number,
  update: Update,
  failing: Map<string, FailingUpdate>,
  result: PageDelivery,
  why: string,
): boolean {
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
  };
  failing.set(key, held);
  result.retryable.push(`${update.id}@${update.version}: ${why}`);
  if (ctx.store.recordFailure(epoch, held)) return true;
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
  ctx: RunContext,
  epoch: number,
  item: DeliveryItem,
  outcome: Exclude<DeliveryResult, { kind: 'delivered' }>,
  failing: Map<string, FailingUpdate>,
  older: OlderFailing,
  result: PageDelivery,
): void {
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

/** The n-th version of each id, oldest first, in round n. */
function rounds(updates: Planned[]): Planned[][] {
  // Most pages have each id once: one round, in the page's order.
  const ids = new Set<string>();
  for (const { update } of updates) ids.add(update.id);
  if (ids.size === updates.length) return updates.length === 0 ? [] : [updates];
  const byId = new Map<string, Planned[]>();
  for (const planned of updates) {
    const versions = byId.get(planned.update.id) ?? [];
    versions.push(planned);
    byId.set(planned.update.id, versions);
  }
  const out: Planned[][] = [];
  for (const versions of byId.values()) {
    versions.sort(
      (a, b) =>
        a.update.versionMs - b.update.versionMs || a.update.version.localeCompare(b.update.version),
    );
    versions.forEach((planned, index) => {
      out[index] ??= [];
      out[index].push(planned);
    });
  }
  return out;
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
