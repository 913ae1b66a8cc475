import { Hono } from 'hono';
import { canAdmin, requireToken } from '../auth.ts';
import { overviewData, pollerPageData } from '../dashboard/data.ts';
import { dashboardPanel } from '../dashboard/panel.ts';
import { pollerPanel } from '../dashboard/poller-page.ts';
import { dashboardShell } from '../dashboard/shell.ts';
import { knownPoller, unknownPoller } from '../known-poller.ts';
import { cspNonce } from '../security-headers.ts';

/**
 * The dashboard: two pages that hold no data (the overview at /, one poller at
 * /dashboard/pollers/:name), and the server-rendered panels their script fetches with the
 * token (read access; a poller's dead letters only with ADMIN_TOKEN). The poller page lives
 * under /dashboard so it never collides with the JSON admin API under /pollers.
 */
export const dashboardRoutes = new Hono<{ Bindings: Env }>()
  .get('/', (c) => c.html(dashboardShell(cspNonce(c), '/dashboard/panel')))
  .get('/dashboard/panel', requireToken('read'), async (c) => {
    const { errors, pollers } = await overviewData(c.env);
    return c.html(dashboardPanel(pollers, errors, new Date()));
  })
  // Public like /, and the same for every name: the page itself says nothing about pollers.
  .get('/dashboard/pollers/:name', (c) =>
    c.html(
      dashboardShell(
        cspNonce(c),
        `/dashboard/pollers/${encodeURIComponent(c.req.param('name'))}/panel`,
      ),
    ),
  )
  .get('/dashboard/pollers/:name/panel', requireToken('read'), knownPoller, async (c) => {
    const name = c.req.param('name');
    const page = await pollerPageData(c.env, name, await canAdmin(c));
    if (page === null) return c.json(unknownPoller(name), 404);
    return c.html(pollerPanel(page, new Date()));
  });
