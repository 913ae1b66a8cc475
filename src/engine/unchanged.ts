import { ledgerKey, type RunContext, type Update } from './ports.ts';

/**
 * `deliver.changes_only`: a newer version of an id whose content (its canonical JSON, without
 * the `changes_ignore` paths) hashes to what was last delivered of that id is not delivered
 * again (an upstream that bumps `updated_at` on a view or a no-op save). It is handled all the
 * same: the ledger keeps it and C moves past it, as for a delivery.
 */
export interface PageContent {
  /** The updates to deliver. */
  send: Update[];
  /** Newer versions with the content last delivered: not sent. */
  unchanged: Update[];
  /** Each update's content hash, by ledger key: what to remember once delivered. */
  hashes: Map<string, string>;
}

const NOTHING = new Map<string, string>();

/** Splits a page's updates into those to send and those whose content did not change. */
export async function withoutUnchanged(ctx: RunContext, updates: Update[]): Promise<PageContent> {
  const { deliver } = ctx.config;
  const known = ctx.store.idsOf;
  if (!deliver.changes_only || known === undefined || updates.length === 0) {
    return { send: updates, unchanged: [], hashes: NOTHING };
  }
  const ignore = deliver.changes_ignore.map((path) => path.split('.'));
  const hashes = new Map<string, string>();
  await Promise.all(
    updates.map(async (update) => {
      hashes.set(ledgerKey(update.id, update.version), await contentHash(update.record, ignore));
    }),
  );
  const last = known.call(ctx.store, [...new Set(updates.map((update) => update.id))]);
  const send: Update[] = [];
  const unchanged: Update[] = [];
  for (const update of updates) {
    const before = last.get(update.id);
    const same =
      before !== undefined &&
      !before.deleted &&
      before.versionMs < update.versionMs &&
      before.hash === hashes.get(ledgerKey(update.id, update.version));
    (same ? unchanged : send).push(update);
  }
  return { send: unchanged.length === 0 ? updates : send, unchanged, hashes };
}

/** SHA-256 (hex) of a record's canonical JSON: keys sorted, the ignored paths left out. */
export async function contentHash(
  record: unknown,
  ignore: readonly (readonly string[])[],
): Promise<string> {
  const text = JSON.stringify(canonical(record, ignore)) ?? 'undefined';
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The value with object keys in order and the ignored paths (relative to it) removed. */
function canonical(value: unknown, ignore: readonly (readonly string[])[]): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item, []));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const here = ignore.filter((path) => path[0] === key);
    if (here.some((path) => path.length === 1)) continue;
    const deeper = here.map((path) => path.slice(1));
    out[key] = canonical(Reflect.get(value, key), deeper);
  }
  return out;
}
