import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Handler } from '../handlers/types.ts';
import { demoSessions } from './handler.ts';
import { demoRoutes } from './routes.ts';

/**
 * Adds the built-in demo to the Worker: its upstream under /demo and its `demo-sessions`
 * handler. The Worker's entry (src/index.ts) calls it, so that the production app and handler
 * registry do not know the demo: a deployment without it drops one line there. Called at
 * startup, before any request: GET /openapi.json builds its document on first ask, so it
 * lists these routes, and the app's not-found answer does not depend on route order.
 */
export function installDemo(
  app: OpenAPIHono<{ Bindings: Env }>,
  handlers: Record<string, Handler>,
): void {
  app.route('/demo', demoRoutes);
  handlers['demo-sessions'] = demoSessions;
}
