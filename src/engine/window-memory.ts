import type { LedgerEntry, Update } from './ports.ts';

/**
 * Deliveries of a failed window remembered for its retry (R2), beyond the ledger's boundary:
 * enough for every ordinary window; in a larger one, the rest is delivered again by the
 * retry (at least once), so that memory stays bounded by a page, not by the window.
 */
export const FAILED_WINDOW_MEMORY = 10_000;

/**
 * How many recent pages' keys are kept, at least, to drop repeats across pages (ties,
 * shifting offsets): in two generations of this many pages each, the older dropped whole.
 */
const RECENT_PAGES = 4;

/** A handled update's ledger key, and the version that decides how long it is known. */
export interface Handled {
  key: string;
  /** Its version in ms; infinite for one known for the whole window (a failure handled). */
  keep: number;
}

/** Keys by the millisecond they are stamped at: one key alone, or those that share it. */
export type ByVersion = Map<number, string | string[]>;

/**
 * The keys a window knows as handled: the ledger loaded at its start, the boundary
 * deliveries it adds (those the next window can ask for again), and the last few pages.
 * Nothing here grows with the size of the window. The recent pages' keys are found by their
 * version first: asked for every update of every page, a lookup hashes a number, and only
 * updates stamped in the same millisecond compare keys.
 */
export class HandledKeys {
  private current: ByVersion = new Map();
  private previous: ByVersion = new Map();
  private pages = 0;

  constructor(
    private readonly ledger: Set<string>,
    /** Deliveries stamped at or above this stay known for the whole window. */
    private readonly keepFrom: number,
  ) {}

  /** Whether the update with this ledger key, stamped `versionMs`, is handled. */
  has(key: string, versionMs: number): boolean {
    if (this.ledger.size > 0 && this.ledger.has(key)) return true;
    return listed(this.current, versionMs, key) || listed(this.previous, versionMs, key);
  }

  /** One page's handled updates. */
  addPage(handled: readonly Handled[]): void {
    if (this.pages === RECENT_PAGES) {
      this.previous = this.current;
      this.current = new Map();
      this.pages = 0;
    }
    this.pages += 1;
    for (const { key, keep } of handled) {
      if (keep >= this.keepFrom) this.ledger.add(key);
      else list(this.current, keep, key);
    }
  }
}

/** Whether `key` is among those stamped `versionMs`. */
export function listed(keys: ByVersion, versionMs: number, key: string): boolean {
  const same = keys.get(versionMs);
  if (same === undefined) return false;
  return typeof same === 'string' ? same === key : same.includes(key);
}

/** Adds `key`, stamped `versionMs` (most stamps have one key: no array for it). */
export function list(keys: ByVersion, versionMs: number, key: string): void {
  const same = keys.get(versionMs);
  if (same === undefined) keys.set(versionMs, key);
  else if (typeof same === 'string') keys.set(versionMs, [same, key]);
  else same.push(key);
}

/** The ledger entries of updates: without their records, which must not outlive their page. */
export function ledgerEntries(updates: readonly Update[]): LedgerEntry[] {
  return updates.map(({ id, version, versionMs }) => ({ id, version, versionMs }));
}

/**
 * What a window delivered, for the ledger: every delivery at or above `keepFrom` (the next
 * window can ask for it again, R9), and up to FAILED_WINDOW_MEMORY others, which only a
 * window that fails needs (its retry skips them, R2). Ledger entries only, never records.
 */
export class DeliveredLog {
  private boundary: LedgerEntry[] = [];
  private others: LedgerEntry[] = [];

  constructor(private readonly keepFrom: number) {}

  /** Entries made by `ledgerEntries`: kept as they are (the page's other uses share them). */
  add(entries: readonly LedgerEntry[]): void {
    for (const entry of entries) {
      if (entry.versionMs >= this.keepFrom) this.boundary.push(entry);
      else if (this.others.length < FAILED_WINDOW_MEMORY) this.others.push(entry);
    }
  }

  entries(): LedgerEntry[] {
    return this.others.length === 0 ? this.boundary : [...this.others, ...this.boundary];
  }

  /** After a commit: what it needed is in the ledger now. */
  clear(): void {
    this.boundary = [];
    this.others = [];
  }
}

/** Why updates are still failing: a count, and the first few reasons for the error text. */
export class RetryableList {
  count = 0;
  private readonly first: string[] = [];

  add(reasons: readonly string[]): void {
    this.count += reasons.length;
    for (const reason of reasons) if (this.first.length < 1) this.first.push(reason);
  }

  /** The first reason, or undefined when none was added. */
  example(): string | undefined {
    return this.first[0];
  }

  describe(): string {
    const more = this.count > 1 ? ` (and ${this.count - 1} more)` : '';
    return `${this.count} update(s) not delivered: ${this.first[0] ?? ''}${more}`;
  }
}
