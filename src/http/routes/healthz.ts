import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { sameSecret } from '../../secrets/same-secret.ts';
import { canRead } from '../auth.ts';
import { SECURITY } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { json } from '../openapi/json.ts';
import { pollerStatuses } from '../poller-statuses.ts';
import { cachedFleetHealth, freshFleetHealth } from '../public-cache.ts';

/** Runtime pollers at fault named in /healthz's detail; the count is always whole. */
const NAMED_AT_FAULT = 100;

const Health = z.looseObject({
  status: z.enum(['ok', 'not ok']),
  unhealthy: z.number().int(),
  at_fault: z.array(z.string()).optional(),
  reasons: z.record(z.string(), z.array(z.string())).optional(),
  warnings: z.record(z.string(), z.array(z.string())).optional(),
});

const check = createRoute({
  method: 'get',
  path: '/',
  summary: 'Whether every enabled poller is healthy, for uptime monitors',
  description:
    'Public: without a token, only ok / not ok and a count; with STATUS_TOKEN or ADMIN_TOKEN, the pollers at fault and why.',
  security: SECURITY.readOrAnyone,
  responses: {
    200: json(Health, 'No enabled poller is at fault.'),
    503: json(Health, 'Some are at fault: how many (and, to a reader, which and why).'),
  },
});

/**
 * GET /healthz, the one public route, for uptime monitors: 200 when no enabled poller is at
 * fault (misconfigured, lagging past alert_after, FAILURES_BEFORE_ALERT failed runs in a
 * row, or silent: never run within alert_after of being first seen), otherwise 503. Static
 * pollers are asked directly; runtime pollers are counted from the registry (as they last
 * reported), so it stays one request however big the fleet; without a token, from a summary
 * at most PUBLIC_CACHE_TTL_MS (10 s) old. Without a read token it says only that and how many
 * are at fault; with one (STATUS_TOKEN or ADMIN_TOKEN) it names them with their reasons
 * (runtime ones: the first 100 by name, with the reason each last reported), and the healthy
 * pollers with warnings (dead letters, clock skew).
 */
export const healthRoutes = apiRoutes().openapi(check, async (c) => {
  const fleet = (await holdsReadToken(c))
    ? freshFleetHealth(c.env, NAMED_AT_FAULT)
    : cachedFleetHealth(c.env, NAMED_AT_FAULT);
  const [{ pollers }, { groups, faults }] = await Promise.all([pollerStatuses(c.env), fleet]);
  const enabled = pollers.filter((entry) => entry.enabled).map((entry) => entry.status);
  const atFault = enabled.filter((status) => status.alerts.length > 0);
  const runtime = groups.filter((group) => group.kind === 'runtime');
  const runtimeAtFault = runtime.reduce((sum, group) => sum + group.atFault, 0);
  const unhealthy = atFault.length + runtimeAtFault;
  const code = unhealthy === 0 ? 200 : 503;
  const summary = { status: code === 200 ? ('ok' as const) : ('not ok' as const), unhealthy };
  if (!(await canRead(c))) return c.json(summary, code);
  const warned = enabled.filter((status) => status.warnings.length > 0);
  return c.json(
    {
      ...summary,
      at_fault: [...atFault.map((status) => status.name), ...faults.map((fault) => fault.name)],
      reasons: Object.fromEntries([
        ...atFault.map((status) => [status.name, status.alerts]),
        // Reported before the reason was: it comes with the poller's next report.
        ...faults.map((fault) => [
          fault.name,
          [fault.reason ?? `at fault: see GET /status/${fault.name}`],
        ]),
      ]),
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

/**
 * Whether the caller presents STATUS_TOKEN or ADMIN_TOKEN: only they make /healthz read the
 * registry now (public_status opens the detail to anyone, not the registry).
 */
async function holdsReadToken(c: Context<{ Bindings: Env }>): Promise<boolean> {
  const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
  if (presented === undefined) return false;
  for (const token of [c.env.STATUS_TOKEN, c.env.ADMIN_TOKEN]) {
    if (token && (await sameSecret(presented, token))) return true;
  }
  return false;
}
