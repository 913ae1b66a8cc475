import { type FailingUpdate, ledgerKey, type Update } from './ports.ts';
import { type ByVersion, type HandledKeys, list, listed } from './window-memory.ts';

/**
 * What of a page is sent: the updates not delivered yet (each `(id, version)` once), with the
 * older versions of their ids that are still failing put in front of them.
 */

/**
 * Puts in front of a newer version the older versions of its id that are still failing,
 * from their stored record: the older one goes first even if the upstream no longer shows
 * it, so the newer one never waits on a version that will not come back. A failing version
 * `tried` in this window already (engine/window-failing.ts) is not sent again, in front of
 * a newer one or where the page shows it: it waits for the next run, and whatever is newer
 * of its id waits behind it, stored.
 */
export function withOlderFailing(
  fresh: Update[],
  failing: Map<string, FailingUpdate>,
  seen: HandledKeys,
  firstPage: boolean,
  tried: ReadonlySet<string> = new Set(),
): Update[] {
  if (failing.size === 0) return fresh;
  const present = new Set<string>(tried);
  const page =
    tried.size === 0
      ? fresh
      : fresh.filter((update) => !tried.has(ledgerKey(update.id, update.version)));
  for (const update of page) present.add(ledgerKey(update.id, update.version));
  const extra: Update[] = [];
  // The window's first page also retries every version still failing from earlier runs, so
  // each gets its attempts (and its dead letter) even if the upstream no longer shows it.
  if (firstPage) {
    for (const failure of failing.values()) {
      const key = ledgerKey(failure.id, failure.version);
      if (present.has(key) || seen.has(key, failure.versionMs)) continue;
      present.add(key);
      extra.push(fromFailure(failure));
    }
  }
  for (const update of page) {
    for (const failure of failing.values()) {
      if (failure.id !== update.id || failure.versionMs >= update.versionMs) continue;
      const key = ledgerKey(failure.id, failure.version);
      if (present.has(key) || seen.has(key, failure.versionMs)) continue;
      present.add(key);
      extra.push(fromFailure(failure));
    }
  }
  return extra.length === 0 ? page : [...extra, ...page];
}

/** The page's updates not delivered yet, each `(id, version)` once, with their keys. */
export function uniqueNew(
  updates: Update[],
  keys: string[],
  seen: HandledKeys,
): { updates: Update[]; keys: string[] } {
  // A page whose versions strictly rise (or fall) cannot hold one (id, version) twice: only
  // a page with equal stamps needs to be checked against itself.
  const page: ByVersion | null = strictlyOrdered(updates) ? null : new Map();
  // Copied only once one is left out: most pages are new from end to end.
  let fresh: Update[] | null = null;
  let freshKeys: string[] = keys;
  for (let i = 0; i < updates.length; i += 1) {
    const update = updates[i] as Update;
    const key = keys[i] ?? '';
    const repeat =
      seen.has(key, update.versionMs) || (page !== null && listed(page, update.versionMs, key));
    if (repeat) {
      if (fresh === null) {
        fresh = updates.slice(0, i);
        freshKeys = keys.slice(0, i);
      }
      continue;
    }
    if (page !== null) list(page, update.versionMs, key);
    if (fresh !== null) {
      fresh.push(update);
      freshKeys.push(key);
    }
  }
  return fresh === null ? { updates, keys } : { updates: fresh, keys: freshKeys };
}

function strictlyOrdered(updates: Update[]): boolean {
  let rising = true;
  let falling = true;
  for (let i = 1; i < updates.length && (rising || falling); i += 1) {
    const step = (updates[i] as Update).versionMs - (updates[i - 1] as Update).versionMs;
    rising &&= step > 0;
    falling &&= step < 0;
  }
  return rising || falling;
}

/** A stored failing version as an update again (a child with its parent). */
function fromFailure(failure: FailingUpdate): Update {
  const { id, version, versionMs, record, parent } = failure;
  return parent === undefined
    ? { id, version, versionMs, record }
    : { id, version, versionMs, record, parent };
}
