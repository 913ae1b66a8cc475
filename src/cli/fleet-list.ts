import { allPages } from './all-pages.ts';
import type { Api } from './api.ts';

/** A poller as GET /pollers lists it (from the registry, without waking it). */
export interface ListedPoller {
  name: string;
  kind: 'static' | 'runtime';
  labels: Record<string, string>;
  state: string;
  checkpoint: string | null;
  lag_seconds: number | null;
  dead_letters: number;
  [key: string]: unknown;
}

/** The largest page GET /pollers gives: fewer round trips for a big fleet. */
const PAGE = 500;

/** Every poller GET /pollers lists, following next_cursor to the end. */
export async function listAllPollers(
  api: Api,
  filter: { label?: string; state?: string } = {},
): Promise<ListedPoller[]> {
  const query: Record<string, string> = { limit: String(PAGE) };
  if (filter.label !== undefined) query.label = filter.label;
  if (filter.state !== undefined) query.state = filter.state;
  return (await allPages(api, '/pollers', query, 'pollers')) as ListedPoller[];
}
