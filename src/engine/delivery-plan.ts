import { ledgerKey, type RunContext, type Update } from './ports.ts';

/** An update to deliver, with its ledger key (built once per page). */
export interface Planned {
  update: Update;
  key: string;
}

/** How a page's updates go out, planned before any of them does. */
export interface DeliveryPlan {
  updates: Planned[];
  /** The n-th version of every id in round n (see deliverPage). */
  rounds: Planned[][];
  /** Requests it takes if none fails (and none is left unsent as unchanged). */
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
export function batchSize(ctx: RunContext): number {
  const { deliverer, config } = ctx;
  return deliverer.batch ?? ('batch' in config.deliver ? config.deliver.batch : 1);
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
