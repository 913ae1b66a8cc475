import type { BudgetStop, RunBudget } from './budget.ts';
import { idempotencyKey } from './idempotency.ts';
import {
  type DeliveryItem,
  type FailingUpdate,
  ledgerKey,
  type RunContext,
  type Update,
} from './ports.ts';

/** How delivering one page's updates went. */
export interface PageDelivery {
  /** Delivered now (for the ledger). */
  delivered: Update[];
  /** Ledger keys of the updates that are handled: delivered now or dead-lettered. */
  handled: Set<string>;
  /** Updates still failing after this run, with why. */
  retryable: string[];
  deadLettered: number;
  /** Set when the receiver is misconfigured (401/403/404): the run stops. */
  misconfigured?: string;
  /** Set when the budget ran out before every update had its turn. */
  stop?: BudgetStop;
  fenced?: boolean;
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
  updates: Update[],
  failing: Map<string, FailingUpdate>,
  budget: RunBudget,
): Promise<PageDelivery> {
  const result: PageDelivery = {
    delivered: [],
    handled: new Set(),
    retryable: [],
    deadLettered: 0,
  };
  const blocked = new Set<string>(); // ids with a failing older version in this page
  const batchSize = ctx.config.deliver.type === 'handler' ? 1 : ctx.config.deliver.batch;
  const concurrency = ctx.config.deliver.concurrency;

  for (const round of rounds(updates)) {
    const ready = round.filter((update) => {
      if (!blocked.has(update.id)) return true;
      result.retryable.push(
        `${update.id}@${update.version}: waits for an older version of ${update.id}`,
      );
      return false;
    });
    const batches = chunk(ready, batchSize);
    let next = 0;
    const worker = async () => {
      while (next < batches.length && !result.stop && !result.misconfigured && !result.fenced) {
        const batch = batches[next++] ?? [];
        const stop = budget.take(ctx.now());
        if (stop) {
          result.stop = stop;
          return;
        }
        await deliverBatch(ctx, epoch, batch, failing, result, blocked);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
    if (result.stop || result.misconfigured || result.fenced) break;
  }
  return result;
}

async function deliverBatch(
  ctx: RunContext,
  epoch: number,
  batch: Update[],
  failing: Map<string, FailingUpdate>,
  result: PageDelivery,
  blocked: Set<string>,
): Promise<void> {
  const items: DeliveryItem[] = batch.map((update) => {
    const key = idempotencyKey(ctx.poller, update.id, update.version);
    return { update, idempotencyKey: key, attempt: (failing.get(key)?.attempts ?? 0) + 1 };
  });
  const outcome = await ctx.deliverer.deliver(items);
  const lease = ctx.store.read().lease;
  if (!lease.held || lease.epoch !== epoch) {
    result.fenced = true;
    return;
  }
  if (outcome.kind === 'misconfigured') {
    result.misconfigured ??= outcome.error;
    return;
  }
  const now = ctx.now();
  for (const item of items) {
    const { update } = item;
    const ledger = ledgerKey(update.id, update.version);
    const before = failing.get(item.idempotencyKey);
    let written = true;
    if (outcome.kind === 'delivered') {
      result.delivered.push(update);
      result.handled.add(ledger);
      if (before) written = ctx.store.clearFailure(epoch, item.idempotencyKey);
    } else if (item.attempt >= ctx.config.max_attempts) {
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
      result.handled.add(ledger);
      result.deadLettered += 1;
    } else {
      const failure = {
        key: item.idempotencyKey,
        id: update.id,
        version: update.version,
        versionMs: update.versionMs,
        attempts: item.attempt,
        firstFailure: before?.firstFailure ?? now,
        lastFailure: now,
        lastError: outcome.error,
      };
      written = ctx.store.recordFailure(epoch, failure);
      failing.set(item.idempotencyKey, failure);
      blocked.add(update.id);
      result.retryable.push(
        `${update.id}@${update.version} (attempt ${item.attempt}): ${outcome.error}`,
      );
    }
    if (!written) result.fenced = true;
  }
}

/** The n-th version of each id, oldest first, in round n. */
function rounds(updates: Update[]): Update[][] {
  const byId = new Map<string, Update[]>();
  for (const update of updates) {
    const versions = byId.get(update.id) ?? [];
    versions.push(update);
    byId.set(update.id, versions);
  }
  const out: Update[][] = [];
  for (const versions of byId.values()) {
    versions.sort((a, b) => a.versionMs - b.versionMs || a.version.localeCompare(b.version));
    versions.forEach((update, index) => {
      out[index] ??= [];
      out[index].push(update);
    });
  }
  return out;
}

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
