import { createRoute } from '@hono/zod-openapi';
import { canAdmin } from '../auth.ts';
import { overviewData, pollerPageData } from '../dashboard/data.ts';
import { listQueryOf, overviewQuery } from '../dashboard/fleet-query.ts';
import { dashboardPanel } from '../dashboard/panel.ts';
import { pollerPanel } from '../dashboard/poller-page.ts';
import { dashboardShell } from '../dashboard/shell.ts';
import { unknownPoller } from '../known-poller.ts';
import { guarded, readRefusals, SECURITY } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { errorResponse, unknownPollerResponse } from '../openapi/errors.ts';
import { PollerName } from '../openapi/params.ts';
import { cspNonce } from '../security-headers.ts';

const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' as const } } },
});

/**
 * What a panel's token may do, for the page to say (`admin`: ADMIN_TOKEN; `read`: STATUS_TOKEN,
 * or no token where public_status opens the reads). A header, so the panels stay the same HTML.
 */
const ACCESS_HEADER = 'x-tidemark-access';

async function accessOf(c: Parameters<typeof canAdmin>[0]): Promise<'admin' | 'read'> {
  return (await canAdmin(c)) ? 'admin' : 'read';
}

const panelHeaders = {
  [ACCESS_HEADER]: {
    description: 'What the token may do: `admin` (ADMIN_TOKEN) or `read`.',
    schema: { type: 'string' as const, enum: ['admin', 'read'] },
  },
};

const overview = createRoute({
  method: 'get',
  path: '/',
  summary: "The dashboard's overview page (an empty shell: its data needs a token)",
  security: SECURITY.public,
  responses: { 200: html('The page; its script fetches /dashboard/panel with the token.') },
});

const overviewPanel = createRoute({
  method: 'get',
  path: '/dashboard/panel',
  summary: "The overview's panel: one page of the fleet, server-rendered",
  ...guarded('read'),
  request: { query: overviewQuery },
  responses: {
    200: { ...html('The panel.'), headers: panelHeaders },
    400: errorResponse('A query that is not valid.'),
    ...readRefusals,
  },
});

const pollerPage = createRoute({
  method: 'get',
  path: '/dashboard/pollers/{name}',
  summary: "One poller's page (an empty shell, the same for every name)",
  security: SECURITY.public,
  request: { params: PollerName },
  responses: { 200: html("The page; its script fetches the poller's panel with the token.") },
});

const pollerPagePanel = createRoute({
  method: 'get',
  path: '/dashboard/pollers/{name}/panel',
  summary: "One poller's panel (its dead letters only with ADMIN_TOKEN)",
  ...guarded('read'),
  request: { params: PollerName },
  responses: {
    200: { ...html('The panel.'), headers: panelHeaders },
    404: unknownPollerResponse,
    ...readRefusals,
  },
});

/**
 * The dashboard: two pages that hold no data (the overview at /, one poller at
 * /dashboard/pollers/:name), and the server-rendered panels their script fetches with the
 * token (read access; a poller's dead letters only with ADMIN_TOKEN). The overview's panel is
 * one page of the registry (`?search=&label=key=value&state=&cursor=`), so a refresh costs
 * the same at 10 pollers or 10,000. The poller page lives under /dashboard so it never
 * collides with the JSON admin API under /pollers.
 */
export const dashboardRoutes = apiRoutes()
  .openapi(overview, (c) =>
    c.html(dashboardShell(cspNonce(c), '/dashboard/panel', { fleet: true })),
  )
  .openapi(overviewPanel, async (c) => {
    const query = listQueryOf(c.req.valid('query'));
    c.header(ACCESS_HEADER, await accessOf(c));
    return c.html(dashboardPanel(await overviewData(c.env, query), new Date()));
  })
  // Public like /, and the same for every name: the page itself says nothing about pollers.
  .openapi(pollerPage, (c) =>
    c.html(
      dashboardShell(
        cspNonce(c),
        `/dashboard/pollers/${encodeURIComponent(c.req.valid('param').name)}/panel`,
        { fleet: false },
      ),
    ),
  )
  .openapi(pollerPagePanel, async (c) => {
    const { name } = c.req.valid('param');
    const admin = await canAdmin(c);
    const page = await pollerPageData(c.env, name, admin);
    if (page === null) return c.json(unknownPoller(name), 404);
    c.header(ACCESS_HEADER, admin ? 'admin' : 'read');
    return c.html(pollerPanel(page, new Date()));
  });
