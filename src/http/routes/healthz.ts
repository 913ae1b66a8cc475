import { Hono } from 'hono';
import { pollerStatuses } from '../poller-statuses.ts';

/** A poller is at fault after this many failed runs in a row. */
export const FAILURES_BEFORE_ALERT = 3;

/**
 * GET /healthz, the one public route, for uptime monitors: 200 when every enabled poller is
 * within its alert_after and has not failed FAILURES_BEFORE_ALERT runs in a row; otherwise
 * 503 with the names at fault. Nothing more.
 */
export const healthRoutes = new Hono<{ Bindings: Env }>().get('/', async (c) => {
  const { pollers } = await pollerStatuses(c.env);
  const now = Date.now();
  const atFault = pollers
    .filter(({ status, enabled, alertAfter }) => {
      if (!enabled || status.paused) return false;
      if (status.state === 'misconfigured') return true;
      const lagging =
        alertAfter !== null &&
        status.checkpoint !== null &&
        now - Date.parse(status.checkpoint) > alertAfter;
      return lagging || status.consecutive_failures >= FAILURES_BEFORE_ALERT;
    })
    .map(({ status }) => status.name);
  if (atFault.length > 0) return c.json({ status: 'not ok', at_fault: atFault }, 503);
  return c.json({ status: 'ok' });
});
