import { Hono } from 'hono';
import { registryOf } from '../../registry/registry.ts';
import { canRead } from '../auth.ts';
import { pollerStatuses } from '../poller-statuses.ts';

/** Runtime pollers at fault named in /healthz's detail; the count is always whole. */
const NAMED_AT_FAULT = 100;

/**
 * GET /healthz, the one public route, for uptime monitors: 200 when no enabled poller is at
 * fault (misconfigured, lagging past alert_after, FAILURES_BEFORE_ALERT failed runs in a
 * row, or silent: never run within alert_after of being first seen), otherwise 503. Static
 * pollers are asked directly; runtime pollers are counted from the registry (as they last
 * reported), so it stays one request however big the fleet. Without a read token it says
 * only that and how many are at fault; with one (STATUS_TOKEN or ADMIN_TOKEN) it names them
 * with their reasons (runtime ones: the first 100 by name), and the healthy pollers with
 * warnings (dead letters, clock skew).
 */
export const healthRoutes = new Hono<{ Bindings: Env }>().get('/', async (c) => {
  const registry = registryOf(c.env);
  const [{ pollers }, groups] = await Promise.all([pollerStatuses(c.env), registry.summary()]);
  const enabled = pollers.filter((entry) => entry.enabled).map((entry) => entry.status);
  const atFault = enabled.filter((status) => status.alerts.length > 0);
  const runtime = groups.filter((group) => group.kind === 'runtime');
  const runtimeAtFault = runtime.reduce((sum, group) => sum + group.atFault, 0);
  const unhealthy = atFault.length + runtimeAtFault;
  const code = unhealthy === 0 ? 200 : 503;
  const summary = { status: code === 200 ? 'ok' : 'not ok', unhealthy };
  if (!(await canRead(c))) return c.json(summary, code);
  const warned = enabled.filter((status) => status.warnings.length > 0);
  const runtimeNames = runtimeAtFault > 0 ? await registry.atFault(NAMED_AT_FAULT) : [];
  return c.json(
    {
      ...summary,
      at_fault: [...atFault.map((status) => status.name), ...runtimeNames],
      reasons: Object.fromEntries(atFault.map((status) => [status.name, status.alerts])),
      warnings: Object.fromEntries(warned.map((status) => [status.name, status.warnings])),
      fleet: {
        static: enabled.length,
        runtime: runtime.reduce((sum, group) => sum + group.count, 0),
        runtime_at_fault: runtimeAtFault,
      },
    },
    code,
  );
});
