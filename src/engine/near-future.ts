import type { LedgerEntry } from './ports.ts';

/** Versions stamped further ahead of our clock than this are an upstream's clock bug. */
export const FAR_FUTURE_MS = 24 * 3_600_000;

/**
 * A version stamped far in the future (an upstream clock bug: the year 2999) would stay in
 * the ledger forever, loaded by every window. It is remembered as if stamped FAR_FUTURE_MS
 * from now, so it is pruned a day later (the upstream, still showing it, then has it
 * delivered again: about once a day, never lost, and the ledger stays bounded).
 */
export function untilNearFuture(entries: LedgerEntry[], now: number): LedgerEntry[] {
  const latest = now + FAR_FUTURE_MS;
  if (!entries.some((entry) => entry.versionMs > latest)) return entries;
  return entries.map((entry) =>
    entry.versionMs > latest ? { ...entry, versionMs: latest } : entry,
  );
}
