// The one reading of a config's dot paths (pure): changes_ignore meets keys as every path does.
import { type DotPath, dotPath, runAt } from '../sources/dot-path.ts';
import { deliveryOp } from './idempotency.ts';
import { ledgerKey, type RunContext, type Update } from './ports.ts';

/**
 * `deliver.changes_only`: a newer version of an id whose content (its canonical JSON, without
 * the `changes_ignore` paths) hashes to what the receiver last got of that id is not sent. It
 * is handled all the same: the ledger keeps it and C moves past it, as for a delivery.
 *
 * "Last got" is judged in order, as the page's versions go out (engine/deliver-page.ts): a
 * version is compared with the one delivered before it, on this page or earlier, never with
 * one that is still to go or whose delivery failed. A page with x@v2 (C) and x@v3 (B) after B
 * was delivered sends both: v3 changes what the receiver has by then. A delete is always sent,
 * but for one of the deletions stream that a newer version of its id has overtaken.
 */
export interface ChangesJudge {
  /** Each upsert's content hash, by ledger key: what to remember once it is handled. */
  readonly hashes: ReadonlyMap<string, string>;
  /**
   * Whether this version, whose turn it is (every older one of its id handled), would change
   * nothing the receiver has: an upsert with the content it last got of its id, or a delete of
   * the deletions stream older than the version of its id the receiver was last judged to
   * hold. Then it is not sent.
   */
  unchanged(update: Update, key: string): boolean;
  /** The receiver got this version: the next of its id is compared with it. */
  sent(update: Update, key: string): void;
}

/** What the receiver last got of an id, as the judge sees it. */
interface Last {
  versionMs: number;
  hash: string | null;
  deleted: boolean;
}

/**
 * The judge for one page's updates, from what the per-id memory says the receiver last got of
 * their ids; null when changes_only is off (or the page has nothing to judge).
 */
export async function changesJudge(
  ctx: RunContext,
  updates: readonly Update[],
): Promise<ChangesJudge | null> {
  const { deliver } = ctx.config;
  const known = ctx.store.idsOf;
  // A resume round lists what it lists again in the next (a resync lists everything): what
  // the receiver has of an id, the same version with the same content, is not sent again.
  const rounds = ctx.config.source.resume !== undefined;
  // A parent's children are listed again whenever it changes: a child whose content the
  // receiver has (at its version or before) is not sent again.
  const children = ctx.config.source.children !== undefined;
  if (!(deliver.changes_only || rounds || children) || known === undefined) return null;
  const upserts = updates.filter((update) => deliveryOp(ctx, update) === 'upsert');
  if (upserts.length === 0 && ctx.stream !== 'deletions') return null;
  const ignore = deliver.changes_ignore;
  const hashes = new Map<string, string>();
  await Promise.all(
    upserts.map(async (update) => {
      hashes.set(ledgerKey(update.id, update.version), await contentHash(update.record, ignore));
    }),
  );
  const last = new Map<string, Last>(known.call(ctx.store, [...new Set(updates.map((u) => u.id))]));
  return {
    hashes,
    unchanged(update, key) {
      const before = last.get(update.id);
      // The deletions stream is read after the main stream: a record deleted and restored
      // since the last run shows its restore first, skipped if its content is the one the
      // receiver has, then its older delete, which must not remove it. A delete stamped
      // before a version the receiver holds (or was judged to hold) is overtaken.
      if (ctx.stream === 'deletions') {
        return before !== undefined && before.versionMs > update.versionMs;
      }
      if (deliveryOp(ctx, update) === 'delete') return false;
      const newer = deliver.changes_only
        ? before !== undefined && before.versionMs < update.versionMs
        : false;
      const again =
        before !== undefined &&
        ((rounds && before.versionMs === update.versionMs) ||
          (update.parent !== undefined && before.versionMs <= update.versionMs));
      const same =
        before !== undefined &&
        !before.deleted &&
        (newer || again) &&
        before.hash === hashes.get(key);
      if (same) last.set(update.id, { ...before, versionMs: update.versionMs });
      return same;
    },
    sent(update, key) {
      const before = last.get(update.id);
      // An older version than the one the receiver holds changes nothing there (nor in the
      // memory: an older version never replaces a newer one).
      if (before !== undefined && before.versionMs > update.versionMs) return;
      const deleted = deliveryOp(ctx, update) === 'delete';
      last.set(update.id, {
        versionMs: update.versionMs,
        hash: deleted ? null : (hashes.get(key) ?? null),
        deleted,
      });
    },
  };
}

/** SHA-256 (hex) of a record's canonical JSON: keys sorted, the ignored dot paths left out. */
export async function contentHash(record: unknown, ignore: readonly string[]): Promise<string> {
  const from = ignore.map((path) => ({ path: dotPath(path), at: 0 }));
  const text = JSON.stringify(canonical(record, from)) ?? 'undefined';
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** A record's canonical JSON (keys sorted): what a content version is a hash of. */
export function canonicalJson(record: unknown): string {
  return JSON.stringify(canonical(record, [])) ?? 'undefined';
}

/** An ignored path, and which of its steps are still to match at this level. */
interface Ignored {
  path: DotPath;
  at: number;
}

/**
 * The value with object keys in order and the ignored paths (relative to it) removed. Each
 * path meets a key the way readPath reads it (its longest run of steps that is a key, so
 * `"@odata.etag"` leaves out Graph's `@odata.etag`).
 */
function canonical(value: unknown, ignore: readonly Ignored[]): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item, []));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  if (ignore.length === 0) {
    for (const key of Object.keys(value).sort()) out[key] = canonical(Reflect.get(value, key), []);
    return out;
  }
  const dropped = new Set<string>();
  const deeper = new Map<string, Ignored[]>();
  for (const { path, at } of ignore) {
    const size = runAt(value, path, at);
    const key = path.runs[at]?.[size - 1];
    if (size === 0 || key === undefined) continue;
    if (at + size === path.length) dropped.add(key);
    else deeper.set(key, [...(deeper.get(key) ?? []), { path, at: at + size }]);
  }
  for (const key of Object.keys(value).sort()) {
    if (dropped.has(key)) continue;
    out[key] = canonical(Reflect.get(value, key), deeper.get(key) ?? []);
  }
  return out;
}
