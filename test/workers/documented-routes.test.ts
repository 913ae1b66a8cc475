import { describe, expect, it } from 'vitest';
import operations from '../../docs/operations.md?raw';
import { markdownSection, tableRows } from '../support/markdown-table.ts';
import { type Access, accessOf, appRoutes } from '../support/route-access.ts';
import { app } from '../support/worker.ts';

/** The token cell each kind of route has in the route table, backticks left out. */
const TOKEN_CELL: Record<Access, string> = {
  public: 'none',
  nudge: "ADMIN_TOKEN or the poller's NUDGE_TOKEN",
  read: 'STATUS_TOKEN or ADMIN_TOKEN',
  admin: 'ADMIN_TOKEN',
};

/**
 * The route table of docs/operations.md (Routes), by `METHOD /path` with its token cell. A
 * row is recognised by its first two cells: an HTTP method, and one backticked path written
 * as Hono registers it (`/pollers/:name/dead-letters/:key`); any other row is an error.
 */
function documentedRoutes(): Map<string, string> {
  const rows = tableRows(markdownSection(operations, '## Routes'));
  expect(rows.length, 'the "Routes" section holds a table').toBeGreaterThan(0);
  const routes = new Map<string, string>();
  for (const [method = '', cell = '', token = ''] of rows) {
    const path = /^`(\/[^`\s]*)`$/.exec(cell)?.[1];
    if (!/^(GET|POST|PUT|PATCH|DELETE)$/.test(method) || path === undefined) {
      throw new Error(
        `docs/operations.md "Routes": a row must start with a method and a \`/path\`: ${method} | ${cell}`,
      );
    }
    const route = `${method} ${path}`;
    if (routes.has(route)) throw new Error(`docs/operations.md "Routes": ${route} has two rows`);
    routes.set(route, token.replaceAll('`', ''));
  }
  return routes;
}

describe('docs/operations.md: a row for every route, with its token', () => {
  const routes = appRoutes(app.routes);
  const documented = documentedRoutes();

  it('has a row for every route of the app', () => {
    const missing = routes.filter((route) => !documented.has(route));
    expect(missing, 'routes without a row in the "Routes" table').toEqual([]);
  });

  it('has no row for a route the app does not have', () => {
    const stale = [...documented.keys()].filter((route) => !routes.includes(route));
    expect(stale, 'rows of the "Routes" table that are not routes').toEqual([]);
  });

  it('names the token each route takes, as the auth matrix checks it', () => {
    const wrong = routes
      .filter((route) => documented.has(route))
      .filter((route) => documented.get(route) !== TOKEN_CELL[accessOf(route)])
      .map((route) => `${route}: "${documented.get(route)}", not "${TOKEN_CELL[accessOf(route)]}"`);
    expect(wrong).toEqual([]);
  });
});
