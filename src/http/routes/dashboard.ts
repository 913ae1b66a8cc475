import { Hono } from 'hono';
import { runView } from '../../poller/status.ts';
import { requireToken } from '../auth.ts';
import { dashboardPanel } from '../dashboard/panel.ts';
import { dashboardShell } from '../dashboard/shell.ts';
import { pollerObject } from '../known-poller.ts';
import { pollerStatuses } from '../poller-statuses.ts';
import { cspNonce } from '../security-headers.ts';

/** GET / (the page, no data) and GET /dashboard/panel (the data, read access). */
export const dashboardRoutes = new Hono<{ Bindings: Env }>()
  .get('/', (c) => c.html(dashboardShell(cspNonce(c))))
  .get('/dashboard/panel', requireToken('read'), async (c) => {
    const { pollers } = await pollerStatuses(c.env);
    const withRuns = await Promise.all(
      pollers.map(async ({ status }) => ({
        status,
        runs: (await pollerObject(c.env, status.name).runs(60)).map(runView),
      })),
    );
    return c.html(dashboardPanel(withRuns, new Date()));
  });
