import { type Api, failure, isObject } from './api.ts';
import { CliError } from './errors.ts';

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
  const pollers: ListedPoller[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (filter.label !== undefined) query.set('label', filter.label);
    if (filter.state !== undefined) query.set('state', filter.state);
    if (cursor !== null) query.set('cursor', cursor);
    const path = `/pollers?${query}`;
    const reply = await api.call('GET', path);
    if (reply.status !== 200) throw failure('GET', path, reply);
    const page = reply.body;
    if (!isObject(page) || !Array.isArray(page.items)) {
      throw new CliError(`GET ${path}: not a page of pollers: is TIDEMARK_URL a tidemark Worker?`);
    }
    pollers.push(...(page.items as ListedPoller[]));
    cursor = typeof page.next_cursor === 'string' ? page.next_cursor : null;
  } while (cursor !== null);
  return pollers;
}
