import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { demoRoutes } from '../demo/routes.ts';
import { deadLetterRoutes } from './routes/dead-letters.ts';
import { statusRoutes } from './routes/status.ts';

/** The Worker's HTTP face: status (and, later, admin, metrics, dashboard) plus the demo upstream. */
export const app = new Hono<{ Bindings: Env }>()
  .get('/', (c) =>
    c.json({
      name: 'tidemark',
      routes: [
        'GET /status',
        'GET /status/:poller',
        'GET /pollers/:name/dead-letters',
        'POST /pollers/:name/dead-letters/:key/replay',
        'DELETE /pollers/:name/dead-letters/:key',
        'GET /demo/sessions',
        'GET /demo/audit',
      ],
    }),
  )
  .route('/status', statusRoutes)
  .route('/pollers', deadLetterRoutes)
  .route('/demo', demoRoutes)
  .notFound((c) => c.json({ error: 'not found' }, 404))
  .onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    console.log(JSON.stringify({ event: 'http_error', path: c.req.path, error: String(error) }));
    return c.json({ error: 'internal error' }, 500);
  });
