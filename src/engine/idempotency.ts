import type { DeliveryOp, RunContext, Update } from './ports.ts';

/**
 * R13: every delivery carries `<poller>:<id>:<version>` so receivers can deduplicate too.
 * A `%` or `:` in the poller or the id is percent-encoded (`%25`, `%3A`), so the first two
 * `:` always end those parts and no two updates share a key (id "b:c" at version "d" and
 * id "b" at version "c:d" would). The version, last, stays as the upstream wrote it (an ISO
 * time has colons of its own), and a plain id gives the same key as it always did.
 */
export function idempotencyKey(poller: string, id: string, version: string): string {
  // Joined, not concatenated: a flat string. A concatenation is a rope, and one rope in a
  // webhook's body sends JSON.stringify down its slow, recursive path: slower for every
  // batch, and out of stack for a record nested 100,000 levels deep.
  return [keyPart(poller), keyPart(id), version].join(':');
}

/**
 * What ends the key of a delete that does not come from the main stream (source.deletions,
 * a reconciliation): its version is a time of deletion, which may equal an update's
 * `updated_at`, and its failures must be told from the main stream's (they are retried as
 * deletes, by the pass that found them).
 */
export const DELETE_KEY_SUFFIX = ':deleted';

/**
 * What a reconciliation's upsert adds to its key: `:listed:` and a hash of the record. A
 * change made without a new updated_at has the version already delivered: under that key,
 * a receiver that deduplicates would drop it. Its failures, too, are its pass's own.
 */
export const LISTED_KEY_PART = ':listed:';

/** The pass whose key this is: the main stream's (undefined), the deletions' or the listing's. */
export function streamOfKey(key: string): RunContext['stream'] {
  if (DELETE_KEY_END.test(key)) return 'deletions';
  return key.includes(LISTED_KEY_PART) ? 'listing' : undefined;
}

/** `:deleted`, or `:deleted:<ms>` for a reconciliation's (see deliveryKey). */
const DELETE_KEY_END = /:deleted(:\d+)?$/;

/** The key of an update delivered under `ctx` (R13). */
export function deliveryKey(ctx: RunContext, update: Update): string {
  const key = idempotencyKey(ctx.poller, update.id, update.version);
  // A reconciliation's delete also names the listing that found it: versioned by the id's
  // last delivered version, a second delete of the same version (a record deleted by
  // mistake, listed again, then deleted for real) must not look like a repeat of the first.
  if (ctx.stream === 'deletions') {
    const found = update.foundAt === undefined ? '' : `:${update.foundAt}`;
    return key + DELETE_KEY_SUFFIX + found;
  }
  if (ctx.stream === 'listing') {
    return key + LISTED_KEY_PART + hash53(JSON.stringify(update.record) ?? 'undefined');
  }
  return key;
}

/** What the receiver is asked to do with an update delivered under `ctx`. */
export function deliveryOp(ctx: RunContext, update: Update): DeliveryOp {
  if (ctx.stream === 'deletions') return 'delete';
  // A child its parent no longer lists (engine/child-deletes.ts): its record is null, which
  // no child read from a page can be (an item without an id is unreadable).
  if (update.parent !== undefined && update.record === null) return 'delete';
  return ctx.isDeleted?.(update.record) ? 'delete' : 'upsert';
}

/** Whether a stored key (a failure, a dead letter) is a delete of the deletions pass. */
export function isDeletionKey(key: string): boolean {
  return streamOfKey(key) === 'deletions';
}

/** The failures that are `ctx`'s own to retry: its pass's (engine/idempotency.ts streamOfKey). */
export function ownFailures<T>(ctx: RunContext, failing: Map<string, T>): Map<string, T> {
  let mixed = false;
  for (const key of failing.keys()) {
    if (streamOfKey(key) !== ctx.stream) {
      mixed = true;
      break;
    }
  }
  if (!mixed) return failing;
  return new Map([...failing].filter(([key]) => streamOfKey(key) === ctx.stream));
}

/** The main stream's failures, which a delete of the same id waits for (R15, R19). */
export function mainFailures<T>(failing: Map<string, T>): T[] {
  return [...failing].filter(([key]) => streamOfKey(key) === undefined).map(([, f]) => f);
}

function keyPart(text: string): string {
  // Built for every delivery: most ids have neither character, and stay as they are.
  if (!text.includes('%') && !text.includes(':')) return text;
  return text.replaceAll('%', '%25').replaceAll(':', '%3A');
}

/**
 * The key of a dead letter for a record the source could not read: it has no id or version,
 * so it is named by a hash of its raw JSON (the same bad record keeps the same key).
 */
export function unreadableKey(poller: string, raw: unknown): string {
  return `${poller}:unreadable:${hash53(JSON.stringify(raw) ?? 'undefined')}`;
}

/** cyrb53: a fast 53-bit string hash, hex. Not cryptographic; it only names a payload. */
export function hash53(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}
