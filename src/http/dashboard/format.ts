/** Times and durations as the dashboard shows them: short, in UTC, always in words or units. */

/** An ISO time as "2026-01-01 12:00:00Z", or "—" for none. */
export const when = (iso: string | null): string =>
  iso === null ? '—' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

/** Seconds as one or two units: "45s", "12m", "3h 5m", "2d 4h". */
export function seconds(total: number | null): string {
  if (total === null) return '—';
  const s = Math.max(0, Math.round(total));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h ${Math.round((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.round((s % 86_400) / 3600)}h`;
}

/** How far `iso` is from `now`, in words: "in 40s", "3m ago". */
export function relative(iso: string | null, now: number): string {
  if (iso === null) return '';
  const delta = (Date.parse(iso) - now) / 1000;
  if (Number.isNaN(delta)) return '';
  return delta >= 0 ? `in ${seconds(delta)}` : `${seconds(-delta)} ago`;
}

/** A run's wall time: "850 ms", "12.3 s", "4m". */
export function elapsed(startedAt: string, finishedAt: string): string {
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  if (Number.isNaN(ms) || ms < 0) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return seconds(ms / 1000);
}

/** "1 dead letter", "3 dead letters". */
export const plural = (count: number, noun: string): string =>
  `${count} ${noun}${count === 1 ? '' : 's'}`;
