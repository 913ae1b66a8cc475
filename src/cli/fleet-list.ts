import { allPages } from './all-pages.ts';
import { type Api, failure, isObject } from './api.ts';

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

/** What a list row shows of a poller, read live from its object. */
export interface LiveFigures {
  state: string;
  checkpoint: string | null;
  lag_seconds: number | null;
  dead_letters: number;
}

/**
 * Every static poller's figures as its object has them now (GET /status, one request). The
 * registry hears of a moved checkpoint only with a change of state or its hourly heartbeat,
 * so its row of a static poller can be an hour behind; a runtime poller's row says when it
 * was reported instead.
 */
export async function liveStaticFigures(api: Api): Promise<Map<string, LiveFigures>> {
  const reply = await api.call('GET', '/status');
  if (reply.status !== 200) throw failure('GET', '/status', reply);
  const pollers =
    isObject(reply.body) && Array.isArray(reply.body.pollers) ? reply.body.pollers : [];
  const live = new Map<string, LiveFigures>();
  for (const status of pollers) {
    if (!isObject(status) || typeof status.name !== 'string') continue;
    const dead = isObject(status.dead_letters) ? status.dead_letters.count : 0;
    live.set(status.name, {
      state: String(status.state),
      checkpoint: typeof status.checkpoint === 'string' ? status.checkpoint : null,
      lag_seconds: typeof status.lag_seconds === 'number' ? status.lag_seconds : null,
      dead_letters: typeof dead === 'number' ? dead : 0,
    });
  }
  return live;
}
