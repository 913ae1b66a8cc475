import type { BudgetStop, RunBudget } from './budget.ts';
import { deliverPage } from './deliver-page.ts';
import { type DeliveryPlan, planDelivery } from './delivery-plan.ts';
import { untilNearFuture } from './near-future.ts';
import type { LedgerEntry, PollerStore, RunContext, Update } from './ports.ts';
import { rememberDelivered } from './remembered-ids.ts';
import { type ChangesJudge, changesJudge } from './unchanged.ts';
import type { WindowFailing } from './window-failing.ts';
import {
  type DeliveredLog,
  type HandledKeys,
  ledgerEntries,
  type RetryableList,
} from './window-memory.ts';

/**
 * How often a window that goes on keeps what it delivered (one row, ledger_pages). A write
 * makes the object's next outgoing request wait until it is stored (the output gate), so
 * a write per page would slow a fast upstream by a commit per page: against a real API a
 * page takes longer than this and every page is kept; when pages come faster, a crash
 * delivers again at most this much of them, besides the page in flight.
 */
export const PAGES_KEPT_EVERY_MS = 50;

const NO_HASHES: ReadonlyMap<string, string> = new Map();

/** How one batch of a window's updates is handled. */
export interface Handling {
  /** Their ledger keys, when the caller has them already. */
  keys?: string[] | undefined;
  /**
   * Whether the window's ledger keeps them (the stream's records). A parent's children are
   * not versioned by the window's clock: the per-id memory tells what they repeat.
   */
  ledger: boolean;
  /** Whether they are kept as they are delivered (a ledger_pages row): the window goes on. */
  keep: boolean;
  /** Handled without being sent: parents whose children are delivered without them. */
  silent?: boolean;
  /** The page stream's look-ahead: told what delivering these will cost. */
  askAhead?: (plan: DeliveryPlan) => void;
}

/** How handling a batch went. */
export type HandledBatch =
  | {
      kind: 'handled';
      /** Nothing failing, held or cut short: every update of the batch is handled. */
      everyHandled: boolean;
      /** The budget ran out before every update had its turn. */
      stop?: BudgetStop;
    }
  | { kind: 'misconfigured'; error: string }
  | { kind: 'fenced' };

/**
 * What one window delivers and remembers, batch by batch (a page, a parent, a page of its
 * children): each batch judged (changes_only, the per-id memory), planned, delivered, and
 * kept in the window's memory (its ledger, the pages kept, what is still failing).
 */
export class WindowDeliveries {
  constructor(
    private readonly ctx: RunContext,
    private readonly epoch: number,
    private readonly budget: RunBudget,
    private readonly tally: {
      records: number;
      deadLettered: number;
      released: number;
      unchanged: number;
    },
    private readonly memory: {
      seen: HandledKeys;
      loaded: WindowFailing;
      delivered: DeliveredLog;
      unkept: UnkeptPages;
      retryable: RetryableList;
    },
  ) {}

  /** Delivers `sent` (the updates not handled yet, older failing versions first). */
  async deliver(sent: Update[], how: Handling): Promise<HandledBatch> {
    const { ctx, epoch, tally } = this;
    const { seen, loaded, delivered, unkept, retryable } = this.memory;
    // deliver.changes_only: a version whose content is the one the receiver last got of
    // its id is handled without being sent, judged as its turn comes (engine/unchanged.ts).
    // Parents handled unsent are judged by nothing: no hash, no per-id memory read, for them.
    const judged =
      how.silent && sent.every((update) => update.parent === undefined)
        ? null
        : await changesJudge(ctx, sent);
    const judge = how.silent ? silently(judged) : judged;
    const plan = planDelivery(ctx, sent, how.keys);
    how.askAhead?.(plan);
    const outcome = await deliverPage(
      ctx,
      epoch,
      plan,
      loaded.map,
      loaded.older,
      this.budget,
      judge,
    );
    if (outcome.fenced) return { kind: 'fenced' };
    const { unchanged } = outcome;
    // What was not sent on purpose (a parent) is not the receiver's: nothing to remember.
    const handled = how.silent
      ? outcome.delivered
      : unchanged.length === 0
        ? outcome.delivered
        : [...unchanged, ...outcome.delivered];
    if (!(await rememberDelivered(ctx, epoch, handled, judge?.hashes ?? NO_HASHES))) {
      return { kind: 'fenced' };
    }
    if (!how.silent) tally.unchanged += unchanged.length;
    if (how.ledger) {
      const unchangedEntries = ledgerEntries(unchanged);
      if (unchanged.length > 0) delivered.add(unchangedEntries);
      // One entry per delivered update, shared by the window's log and the pages kept.
      const deliveredEntries = ledgerEntries(outcome.delivered);
      // The pages of a window that goes on are kept as they are delivered (a row): a crash
      // redelivers the page in flight, not the window so far.
      if (how.keep) {
        unkept.add(unchangedEntries);
        unkept.add(deliveredEntries);
        if (!unkept.keepIfDue(ctx.store, epoch, ctx.now())) return { kind: 'fenced' };
      }
      delivered.add(deliveredEntries);
    }
    tally.records += outcome.delivered.length;
    tally.deadLettered += outcome.deadLettered;
    tally.released += outcome.released;
    // A parent's children are not versioned by the window's clock: the per-id memory, not
    // the window's, tells what they repeat (engine/unchanged.ts).
    if (how.ledger) seen.addPage(outcome.handled);
    retryable.add(outcome.retryable);
    if (outcome.misconfigured) return { kind: 'misconfigured', error: outcome.misconfigured };
    return {
      kind: 'handled',
      everyHandled: outcome.retryable.length === 0 && outcome.stop === undefined,
      ...(outcome.stop === undefined ? {} : { stop: outcome.stop }),
    };
  }
}

/**
 * The judge for parents delivered only through their children: every parent is handled
 * unsent (its children judged as ever).
 */
function silently(judge: ChangesJudge | null): ChangesJudge {
  return {
    hashes: judge?.hashes ?? NO_HASHES,
    unchanged: (update, key) =>
      update.parent === undefined ? true : (judge?.unchanged(update, key) ?? false),
    sent: (update, key) => judge?.sent(update, key),
  };
}

/**
 * What a window that goes on delivered and has not kept yet: kept (a row of ledger_pages)
 * once PAGES_KEPT_EVERY_MS passed since the last, so a crash redelivers little of it. The
 * entries alone: the records they came with are not held past their page.
 */
export class UnkeptPages {
  private entries: LedgerEntry[] = [];

  constructor(private keptAt: number) {}

  add(entries: readonly LedgerEntry[]): void {
    for (const entry of entries) this.entries.push(entry);
  }

  /** Keeps them if it is time; false when the lease was lost (R6). */
  keepIfDue(store: Pick<PollerStore, 'rememberPage'>, epoch: number, now: number): boolean {
    if (this.entries.length === 0 || now - this.keptAt < PAGES_KEPT_EVERY_MS) return true;
    if (!store.rememberPage(epoch, untilNearFuture(this.entries, now))) return false;
    this.clear(now);
    return true;
  }

  /** Kept another way (the window's progress committed): none left to keep. */
  clear(now: number): void {
    this.entries = [];
    this.keptAt = now;
  }
}
