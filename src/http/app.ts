import { createRoute, z } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { guarded, readRefusals } from './openapi/access.ts';
import { apiRoutes } from './openapi/api-routes.ts';
import { declareTokens, openApiDocument, servedDocument } from './openapi/document.ts';
import { json } from './openapi/json.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { deadLetterRoutes } from './routes/dead-letters.ts';
import { fleetRoutes } from './routes/fleet.ts';
import { healthRoutes } from './routes/healthz.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { nudgeRoutes } from './routes/nudge.ts';
import { pollerRoutes } from './routes/pollers.ts';
import { previewRoutes } from './routes/preview.ts';
import { secretRoutes } from './routes/secrets.ts';
import { statusRoutes } from './routes/status.ts';
import { securityHeaders } from './security-headers.ts';

const describe = createRoute({
  method: 'get',
  path: '/openapi.json',
  summary: 'This API, described (OpenAPI 3.1)',
  ...guarded('read'),
  responses: {
    200: json(z.looseObject({ openapi: z.string() }), 'The OpenAPI 3.1 document.'),
    ...readRefusals,
  },
});

/**
 * The Worker's HTTP face: the dashboard, /healthz, metrics, status and the admin API (the
 * Worker's entry, src/index.ts, adds the built-in demo upstream to it). Every route needs a token but /healthz (counts only), the
 * dashboard's pages (empty shells: their data comes through token routes) and the nudge
 * route (its own NUDGE_TOKEN rule). Each route is declared once (its zod schemas validate
 * and describe it), and GET /openapi.json lists them all. Every response, errors included,
 * carries the security headers (CSP, frame-ancestors, nosniff, no-referrer).
 */
export const app = apiRoutes();
app.use(securityHeaders());
app
  .route('/', dashboardRoutes)
  .route('/healthz', healthRoutes)
  .route('/metrics', metricsRoutes)
  .route('/status', statusRoutes)
  .route('/pollers', deadLetterRoutes)
  .route('/pollers', pollerRoutes)
  .route('/pollers', secretRoutes)
  .route('/pollers', nudgeRoutes)
  .route('/pollers', fleetRoutes)
  .route('/pollers', previewRoutes)
  .openapi(describe, (c) => c.json(servedDocument(documentOnce(), new URL(c.req.url).origin), 200))
  .notFound((c) => c.json({ error: 'not found' }, 404))
  .onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    console.log(JSON.stringify({ event: 'http_error', path: c.req.path, error: String(error) }));
    return c.json({ error: 'internal error' }, 500);
  });
declareTokens(app);

let document: ReturnType<typeof openApiDocument> | undefined;
/** The routes do not change while the isolate lives: the document is built on first ask. */
function documentOnce() {
  document ??= openApiDocument(app);
  return document;
}
