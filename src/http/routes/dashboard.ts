import { Hono } from 'hono';
import { canAdmin, requireToken } from '../auth.ts';
import { overviewData, pollerPageData } from '../dashboard/data.ts';
import { parseOverviewQuery } from '../dashboard/fleet-query.ts';
import { dashboardPanel } from '../dashboard/panel.ts';
import { pollerPanel } from '../dashboard/poller-page.ts';
import { dashboardShell } from '../dashboard/shell.ts';
import { unknownPoller } from '../known-poller.ts';
import { cspNonce } from '../security-headers.ts';

/**
 * The dashboard: two pages that hold no data (the overview at /, one poller at
 * /dashboard/pollers/:name), and the server-rendered panels their script fetches with the
 * token (read access; a poller's dead letters only with ADMIN_TOKEN). The overview's panel is
 * one page of the registry (`?search=&label=key=value&state=&cursor=`), so a refresh costs
 * the same at 10 pollers or 10,000. The poller page lives under /dashboard so it never
 * collides with the JSON admin API under /pollers.
 */
export const dashboardRoutes = new Hono<{ Bindings: Env }>()
  .get('/', (c) => c.html(dashboardShell(cspNonce(c), '/dashboard/panel', { fleet: true })))
  .get('/dashboard/panel', requireToken('read'), async (c) => {
    const query = parseOverviewQuery(c.req.query());
    if (!query.ok) return c.json({ error: query.error }, 400);
    return c.html(dashboardPanel(await overviewData(c.env, query.query), new Date()));
  })
  // Public like /, and the same for every name: the page itself says nothing about pollers.
  .get('/dashboard/pollers/:name', (c) =>
    c.html(
      dashboardShell(
        cspNonce(c),
        `/dashboard/pollers/${encodeURIComponent(c.req.param('name'))}/panel`,
        { fleet: false },
      ),
    ),
  )
  .get('/dashboard/pollers/:name/panel', requireToken('read'), async (c) => {
    const name = c.req.param('name');
    const page = await pollerPageData(c.env, name, await canAdmin(c));
    if (page === null) return c.json(unknownPoller(name), 404);
    return c.html(pollerPanel(page, new Date()));
  });
