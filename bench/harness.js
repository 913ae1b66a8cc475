// The bench's in-process world, one Worker in the same workerd as tidemark:
// - an upstream at https://upstream.bench/items that generates N records on the fly,
//   100 per page, oldest first (from, cursor), stamped 1 ms apart from BASE;
// - a receiver at https://receiver.bench/hook that accepts and counts;
// - /baseline: the bare loop (fetch pages, POST each page's records, no lease, no
//   checkpoint, no ledger) through the same service bindings, for the ratio.
const BASE = Date.parse('2026-01-01T00:00:00Z');
let counters = { pages: 0, posts: 0, records: 0 };

function page(url, total) {
  const from = Date.parse(url.searchParams.get('from') ?? '') || BASE;
  const offset = Number(url.searchParams.get('cursor') ?? 0);
  const limit = Number(url.searchParams.get('limit') ?? 100);
  const first = Math.max(0, from - BASE) + offset;
  const count = Math.max(0, Math.min(limit, total - first));
  const items = [];
  for (let i = 0; i < count; i += 1) {
    const n = first + i;
    items.push({
      id: `rec-${n}`,
      updated_at: new Date(BASE + n).toISOString(),
      name: `record ${n}`,
      value: n % 997,
    });
  }
  const next = first + count < total ? String(offset + count) : null;
  return { items, next };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const total = Number(env.BENCH_RECORDS ?? 100000);
    const latency = Number(url.searchParams.get('latency') ?? env.LATENCY_MS ?? 0);
    const wait = () =>
      latency > 0 ? new Promise((resolve) => setTimeout(resolve, latency)) : undefined;
    if (url.pathname === '/items') {
      await wait();
      counters.pages += 1;
      return Response.json(page(url, total));
    }
    if (url.pathname === '/hook') {
      await wait();
      const body = await request.json();
      counters.posts += 1;
      counters.records += Array.isArray(body) ? body.length : 1;
      return new Response(null, { status: 204 });
    }
    if (url.pathname === '/counters') return Response.json(counters);
    if (url.pathname === '/reset') {
      counters = { pages: 0, posts: 0, records: 0 };
      return Response.json(counters);
    }
    if (url.pathname === '/baseline') {
      // The bare loop's own latency is what its two services charge per call.
      const started = Date.now();
      let cursor = null;
      let records = 0;
      for (;;) {
        const target = new URL('https://upstream.bench/items');
        target.searchParams.set('from', new Date(BASE).toISOString());
        target.searchParams.set('limit', '100');
        target.searchParams.set('latency', String(latency));
        if (cursor !== null) target.searchParams.set('cursor', cursor);
        const response = await env.UPSTREAM.fetch(target);
        const body = await response.json();
        if (body.items.length > 0) {
          const posted = await env.RECEIVER.fetch(
            `https://receiver.bench/hook?latency=${latency}`,
            {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(
                body.items.map((record) => ({ id: record.id, version: record.updated_at, record })),
              ),
            },
          );
          if (posted.status !== 204) throw new Error(`receiver said ${posted.status}`);
          records += body.items.length;
        }
        if (body.next === null) break;
        cursor = body.next;
      }
      return Response.json({ records, ms: Date.now() - started });
    }
    return new Response('not found', { status: 404 });
  },
};
