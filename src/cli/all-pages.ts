import { type Api, failure, isObject } from './api.ts';
import { CliError } from './errors.ts';

/**
 * Every item of a paged route of the admin API (`{ items, next_cursor }`), following
 * next_cursor to the end: `what` names the items in the error of a reply that is not a page.
 */
export async function allPages(
  api: Api,
  path: string,
  query: Record<string, string>,
  what: string,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams(query);
    if (cursor !== null) params.set('cursor', cursor);
    const url = `${path}?${params}`;
    const reply = await api.call('GET', url);
    if (reply.status !== 200) throw failure('GET', url, reply);
    const page = reply.body;
    if (!isObject(page) || !Array.isArray(page.items)) {
      throw new CliError(`GET ${url}: not a page of ${what}: is TIDEMARK_URL a tidemark Worker?`);
    }
    items.push(...page.items.filter(isObject));
    cursor = typeof page.next_cursor === 'string' ? page.next_cursor : null;
  } while (cursor !== null);
  return items;
}
