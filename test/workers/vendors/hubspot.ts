import { FakeVendor, record, type SeenRequest } from './vendor.ts';

/**
 * HubSpot CRM v3 search (developers.hubspot.com/docs/guides/api/crm/search):
 * `POST /crm/v3/objects/contacts/search` with `filterGroups` (lastmodifieddate GTE a unix ms
 * time, and optionally LT another), `sorts` (lastmodifieddate ASCENDING or DESCENDING),
 * `limit` (at most 200) and `after` (absent on the first page): an offset into the results as
 * they are when that page is asked for. Answers `results` and `paging.next.after`.
 */
export class FakeHubSpot extends FakeVendor {
  readonly host = 'api.hubapi.com';
  override readonly precisionMs = 1;
  /**
   * Called once a page is built, with its number (1 for the first search) and its ids: a test
   * changes a contact there, between two pages of one run.
   */
  onPage: ((page: number, ids: string[]) => void) | undefined;
  private pages = 0;

  protected answer({ method, url, body, headers }: SeenRequest): Response {
    this.require(method === 'POST', 'search is a POST');
    this.require(url.pathname === '/crm/v3/objects/contacts/search', 'unknown path');
    this.require(headers.get('content-type')?.startsWith('application/json'), 'a JSON body');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'a private app token');
    const search = record(body);
    this.require(search, 'a JSON object body');
    const groups = search.filterGroups;
    this.require(Array.isArray(groups) && groups.length === 1, 'one filter group');
    const filters = record(groups[0])?.filters;
    this.require(
      Array.isArray(filters) && filters.length >= 1 && filters.length <= 2,
      'a GTE filter, and at most an LT one',
    );
    const bound = (operator: string) => {
      const filter = filters.map(record).find((f) => f?.operator === operator);
      if (filter === undefined) return undefined;
      this.require(filter.propertyName === 'lastmodifieddate', `${operator} lastmodifieddate`);
      // HubSpot takes a date-time filter value as unix milliseconds.
      this.require(
        typeof filter.value === 'number' && Number.isInteger(filter.value),
        `value must be unix ms, got ${JSON.stringify(filter.value)}`,
      );
      return filter.value;
    };
    const from = bound('GTE');
    this.require(from !== undefined, 'a GTE lastmodifieddate filter');
    const to = bound('LT');
    this.require(filters.length === (to === undefined ? 1 : 2), 'only GTE and LT filters');
    const sort = record(Array.isArray(search.sorts) ? search.sorts[0] : undefined);
    this.require(
      sort?.propertyName === 'lastmodifieddate' &&
        (sort.direction === 'ASCENDING' || sort.direction === 'DESCENDING'),
      'sorted by lastmodifieddate, ASCENDING or DESCENDING',
    );
    const limit = search.limit ?? 10;
    this.require(typeof limit === 'number' && limit >= 1 && limit <= 200, 'limit 1 to 200');
    const after = search.after;
    this.require(
      after === undefined || (typeof after === 'string' && /^\d+$/.test(after)),
      'after is the string paging.next.after gave',
    );
    const oldestFirst = this.changed(from, to);
    const matching = sort.direction === 'ASCENDING' ? oldestFirst : oldestFirst.reverse();
    const page = this.slice(matching, Number(after ?? 0), limit);
    this.pages += 1;
    this.onPage?.(
      this.pages,
      page.rows.map((v) => v.id),
    );
    return Response.json({
      total: matching.length,
      results: page.rows.map((v) => ({
        id: v.id,
        properties: {
          hs_object_id: v.id,
          email: `${v.id}@example.com`,
          lastmodifieddate: new Date(v.at).toISOString(),
        },
        updatedAt: new Date(v.at).toISOString(),
        archived: false,
      })),
      ...(page.next === null ? {} : { paging: { next: { after: String(page.next) } } }),
    });
  }
}
