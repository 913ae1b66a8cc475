import { Hono } from 'hono';
import { canRead } from '../auth.ts';
import { pollerStatuses } from '../poller-statuses.ts';

/**
 * GET /healthz, the one public route, for uptime monitors: 200 when no enabled poller is at
 * fault (misconfigured, lagging past alert_after, FAILURES_BEFORE_ALERT failed runs in a
 * row, or silent: never run within alert_after of being first seen), otherwise 503. Without
 * a read token it says only that and how many are at fault; with one (STATUS_TOKEN or
 * ADMIN_TOKEN) it names them with their reasons, and the healthy pollers with warnings
 * (dead letters, clock skew).
 */
export const healthRoutes = new Hono<{ Bindings: Env }>().get('/', async (c) => {
  const { pollers } = await pollerStatuses(c.env);
  const enabled = pollers.filter((entry) => entry.enabled).map((entry) => entry.status);
  const atFault = enabled.filter((status) => status.alerts.length > 0);
  const code = atFault.length === 0 ? 200 : 503;
  const summary = { status: code === 200 ? 'ok' : 'not ok', unhealthy: atFault.length };
  if (!(await canRead(c))) return c.json(summary, code);
  const warned = enabled.filter((status) => status.warnings.length > 0);
  return c.json(
    {
      ...summary,
      at_fault: atFault.map((status) => status.name),
      reasons: Object.fromEntries(atFault.map((status) => [status.name, status.alerts])),
      warnings: Object.fromEntries(warned.map((status) => [status.name, status.warnings])),
    },
    code,
  );
});
