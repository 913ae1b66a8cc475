import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { demoRoutes } from '../demo/routes.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { deadLetterRoutes } from './routes/dead-letters.ts';
import { fleetRoutes } from './routes/fleet.ts';
import { healthRoutes } from './routes/healthz.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { nudgeRoutes } from './routes/nudge.ts';
import { pollerRoutes } from './routes/pollers.ts';
import { secretRoutes } from './routes/secrets.ts';
import { statusRoutes } from './routes/status.ts';
import { securityHeaders } from './security-headers.ts';

/**
 * The Worker's HTTP face: the dashboard, /healthz, metrics, status, the admin API, and the
 * built-in demo upstream. Every route needs a token but /healthz (counts only), the
 * dashboard's pages (empty shells: their data comes through token routes) and the nudge
 * route (its own NUDGE_TOKEN rule); README "Routes" lists them all. Every response, errors
 * included, carries the security headers (CSP, frame-ancestors, nosniff, no-referrer).
 */
export const app = new Hono<{ Bindings: Env }>()
  .use(securityHeaders())
  .route('/', dashboardRoutes)
  .route('/healthz', healthRoutes)
  .route('/metrics', metricsRoutes)
  .route('/status', statusRoutes)
  .route('/pollers', deadLetterRoutes)
  .route('/pollers', pollerRoutes)
  .route('/pollers', secretRoutes)
  .route('/pollers', nudgeRoutes)
  .route('/pollers', fleetRoutes)
  .route('/demo', demoRoutes)
  .notFound((c) => c.json({ error: 'not found' }, 404))
  .onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    console.log(JSON.stringify({ event: 'http_error', path: c.req.path, error: String(error) }));
    return c.json({ error: 'internal error' }, 500);
  });
