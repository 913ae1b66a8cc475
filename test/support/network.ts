import { TEST_SECRETS } from './pollers.ts';

/**
 * Stands in for the network in the workerd tests that need the platform's own `fetch`
 * behaviour. vitest.config.ts binds it as TEST_NETWORK, so it runs in Node, outside workerd,
 * and a request reaches it through workerd's fetch, which decides by itself whether to
 * follow the redirects it answers.
 *
 * `/final` echoes the method and body that reached it; any other path answers `302` with a
 * relative Location that carries a secret of the test pollers, to be redacted in messages.
 */
export async function testNetwork(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === '/final') {
    return Response.json({ method: request.method, body: await request.text() });
  }
  const location = `/final?token=${TEST_SECRETS.UPSTREAM_TOKEN}`;
  return new Response(null, { status: 302, headers: { location } });
}
