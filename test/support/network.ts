import { TEST_SECRETS } from './pollers.ts';

/**
 * Stands in for the network in the workerd tests that need the platform's own `fetch`
 * behaviour. vitest.config.ts binds it as TEST_NETWORK, so it runs in Node, outside workerd,
 * and a request reaches it through workerd's fetch, which decides by itself whether to
 * follow the redirects it answers.
 *
 * - `/final` echoes the method and body that reached it;
 * - `/redirect-away` answers `302` to another origin's `/sessions`, `/redirect-here` to this
 *   origin's, both with the query kept;
 * - `/sessions` answers one seed-shaped record, stamped at `date_from`, whose id says which
 *   host served it and whether the upstream's credentials reached that host;
 * - any other path answers `302` with a relative Location that carries a secret of the test
 *   pollers, to be redacted in messages.
 */
export async function testNetwork(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === '/final') {
    return Response.json({ method: request.method, body: await request.text() });
  }
  if (url.pathname === '/redirect-away' || url.pathname === '/redirect-here') {
    const origin = url.pathname === '/redirect-away' ? 'https://elsewhere.test' : '';
    const location = `${origin}/sessions${url.search}`;
    return new Response(null, { status: 302, headers: { location } });
  }
  if (url.pathname === '/sessions') {
    const credentials =
      request.headers.get('authorization') === `Bearer ${TEST_SECRETS.UPSTREAM_TOKEN}`
        ? 'with-credentials'
        : 'without-credentials';
    const updatedAt = url.searchParams.get('date_from') ?? new Date().toISOString();
    return Response.json({
      sessions: [{ id: `${url.host}:${credentials}`, updated_at: updatedAt }],
      next_cursor: null,
    });
  }
  const location = `/final?token=${TEST_SECRETS.UPSTREAM_TOKEN}`;
  return new Response(null, { status: 302, headers: { location } });
}
