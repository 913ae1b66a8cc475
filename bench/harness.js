// The bench's in-process world, one Worker in the same workerd as tidemark:
// - an upstream at https://upstream.bench/items that generates `total` records on the fly
//   (BENCH_RECORDS unless the request says `total`), 100 per page, oldest first (from,
//   cursor), stamped 1 ms apart from BASE;
// - /stream: a steady stream for the catch-up (record k stamped start + k·step, for k below
//   count), bounded by from and to, ids repeating every 5,000 records;
// - /live and /publish: records published by the bench while a poller ticks by itself, each
//   visible once its stamp has passed, as on a real API;
// - /tenants: when each `tenant` asked for a page (the fleet bench's ticks, read without
//   waking a poller);
// - a receiver at https://receiver.bench/hook that accepts and counts.
// Every endpoint waits `latency` ms (a query parameter) before it answers.
const BASE = Date.parse('2026-01-01T00:00:00Z');
let counters = { pages: 0, posts: 0, records: 0, last: 0 };
const feeds = new Map();
/** When each `tenant` (a query parameter the fleet bench sets) asked for a page. */
let tenants = new Map();

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

function stream(url) {
  const start = Number(url.searchParams.get('start'));
  const step = Number(url.searchParams.get('step'));
  const count = Number(url.searchParams.get('count'));
  const limit = Number(url.searchParams.get('limit') ?? 100);
  const from = Date.parse(url.searchParams.get('from') ?? '');
  const to = Date.parse(url.searchParams.get('to') ?? '') || Number.POSITIVE_INFINITY;
  const offset = Number(url.searchParams.get('cursor') ?? 0);
  const first = Math.max(0, Math.ceil((from - start) / step));
  const end = Math.min(count, Math.ceil((to - start) / step));
  const items = [];
  for (let k = first + offset; k < Math.min(end, first + offset + limit); k += 1) {
    items.push({ id: `r${k % 5000}`, updated_at: new Date(start + k * step).toISOString(), k });
  }
  const next = first + offset + limit < end ? String(offset + limit) : null;
  return { items, next };
}

function live(url) {
  const records = feeds.get(url.searchParams.get('feed') ?? '') ?? [];
  const from = Date.parse(url.searchParams.get('from') ?? '') || 0;
  const offset = Number(url.searchParams.get('cursor') ?? 0);
  const limit = Number(url.searchParams.get('limit') ?? 100);
  const now = Date.now();
  const visible = records.filter((record) => record.at >= from && record.at <= now);
  const items = visible.slice(offset, offset + limit).map(({ at, ...record }) => record);
  const next = offset + limit < visible.length ? String(offset + limit) : null;
  return { items, next };
}

/** `count` records stamped evenly over the next `spread` ms, each visible once stamped. */
function publish(url) {
  const feed = url.searchParams.get('feed') ?? '';
  const count = Number(url.searchParams.get('count') ?? 100);
  const spread = Number(url.searchParams.get('spread') ?? 0);
  const records = feeds.get(feed) ?? [];
  const now = Date.now();
  for (let i = 0; i < count; i += 1) {
    const at = now + Math.floor((i * spread) / count);
    const n = records.length;
    records.push({ at, id: `${feed}-${n}`, updated_at: new Date(at).toISOString(), value: n });
  }
  feeds.set(feed, records);
  return { published: count, last: now + spread };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const latency = Number(url.searchParams.get('latency') ?? 0);
    const wait = () =>
      latency > 0 ? new Promise((resolve) => setTimeout(resolve, latency)) : undefined;
    if (url.pathname === '/items' || url.pathname === '/stream' || url.pathname === '/live') {
      await wait();
      counters.pages += 1;
      const tenant = url.searchParams.get('tenant');
      if (tenant !== null) tenants.set(tenant, (tenants.get(tenant) ?? []).concat(Date.now()));
      if (url.pathname === '/stream') return Response.json(stream(url));
      if (url.pathname === '/live') return Response.json(live(url));
      const total = Number(url.searchParams.get('total') ?? env.BENCH_RECORDS ?? 100000);
      return Response.json(page(url, total));
    }
    if (url.pathname === '/hook') {
      await wait();
      const body = await request.json();
      counters.posts += 1;
      counters.records += Array.isArray(body) ? body.length : 1;
      counters.last = Date.now();
      return new Response(null, { status: 204 });
    }
    if (url.pathname === '/publish') return Response.json(publish(url));
    if (url.pathname === '/counters') return Response.json(counters);
    if (url.pathname === '/tenants') return Response.json(Object.fromEntries(tenants));
    if (url.pathname === '/reset') {
      counters = { pages: 0, posts: 0, records: 0, last: 0 };
      tenants = new Map();
      return Response.json(counters);
    }
    return new Response('not found', { status: 404 });
  },
};
