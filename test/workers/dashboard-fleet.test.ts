import { env, exports } from 'cloudflare:workers';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TEST_SECRETS } from '../support/pollers.ts';
import { installFakes } from './fakes.ts';

const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;
/** This run's pollers: their names share a prefix no other test uses. */
const RUN = `fleet${crypto.randomUUID().slice(0, 6)}`;
const names = Array.from({ length: 60 }, (_, i) => `${RUN}-${String(i).padStart(2, '0')}`);
const tierOf = (i: number) => (i % 3 === 0 ? 'gold' : 'free');

beforeEach(() => {
  installFakes();
});

function call(method: string, path: string, body?: unknown, token = ADMIN_TOKEN) {
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A runtime poller of the fake upstream, as fleet.test.ts creates them. */
function config(labels: Record<string, string>, token = 'UPSTREAM_TOKEN') {
  return {
    every: '60s',
    labels,
    source: {
      url: 'https://upstream.test/v1/sessions',
      from_param: 'date_from',
      items: 'sessions',
      headers: { Authorization: `Bearer \${${token}}` },
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
    },
    deliver: { type: 'webhook', url: 'https://receiver.test/hooks', secret: '${WEBHOOK_SECRET}' },
  };
}

/** One refresh of the overview: one request, one page. */
async function overview(query: Record<string, string>) {
  const response = await call(
    'GET',
    `/dashboard/panel?${new URLSearchParams(query)}`,
    undefined,
    STATUS_TOKEN,
  );
  expect(response.status).toBe(200);
  const html = await response.text();
  const rows = [...html.matchAll(/<tr data-poller="([^"]+)">([\s\S]*?)<\/tr>/g)];
  return {
    html,
    names: rows.map((row) => row[1] ?? ''),
    row: (name: string) => rows.find((row) => row[1] === name)?.[2] ?? '',
    next: /data-next-cursor="([^"]*)"/.exec(html)?.[1] ?? null,
  };
}

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

beforeAll(async () => {
  installFakes();
  for (let start = 0; start < names.length; start += 20) {
    const created = await Promise.all(
      names
        .slice(start, start + 20)
        .map((name, i) =>
          call('PUT', `/pollers/${name}`, config({ tier: tierOf(start + i), team: 'fleet' })),
        ),
    );
    expect(created.map((response) => response.status)).toEqual(created.map(() => 201));
  }
});

afterAll(async () => {
  for (const name of names) await call('DELETE', `/pollers/${name}`);
});

describe('the overview at 10,000 pollers: a page of the registry at a time', () => {
  it('pages through 60 runtime pollers 50 at a time, each with its kind and labels, the next page from the cursor', async () => {
    const first = await overview({ search: RUN });
    expect(first.names).toEqual(names.slice(0, 50));
    expect(first.next).toBe(names[49]);
    const row = first.row(names[3] ?? '');
    expect(row).toContain(
      `<a href="/dashboard/pollers/${names[3]}"><strong>${names[3]}</strong></a>`,
    );
    expect(row).toContain('<span class="kind runtime">runtime</span>');
    expect(row).toContain('href="/?label=tier%3Dgold"');
    expect(text(row)).toContain('tier=gold team=fleet');
    expect(row).toContain(`data-action="run" data-poller="${names[3]}"`);

    const second = await overview({ search: RUN, cursor: first.next ?? '' });
    expect(second.names).toEqual(names.slice(50));
    expect(second.next).toBe('');

    // Unfiltered, the static pollers of POLLERS are listed with the runtime ones, by name.
    const all = await overview({});
    expect(all.names).toHaveLength(50);
    expect(all.names).toEqual([...all.names].sort());
    expect(all.row('bounded')).toContain('<span class="kind static">static</span>');
    const statics = Object.keys(JSON.parse(String(env.POLLERS)) as object).length;
    expect(text(all.html)).toMatch(
      new RegExp(`\\d+ pollers \\(${statics} static, \\d+ runtime\\)`),
    );
  });

  it('filters by label, by state and by part of the name, and says when nothing matches', async () => {
    const gold = await overview({ label: 'tier=gold', search: RUN });
    expect(gold.names).toEqual(names.filter((_, i) => tierOf(i) === 'gold'));

    const paused = [names[7], names[42]];
    for (const name of paused) await call('POST', `/pollers/${name}/pause`, { reason: 'test' });
    const byState = await overview({ state: 'paused', search: RUN });
    expect(byState.names).toEqual(paused);
    expect(byState.row(names[7] ?? '')).toContain('<span class="state paused">paused</span>');
    expect(byState.row(names[7] ?? '')).toContain('data-action="resume"');
    // The fleet's counts by state link to the same filter.
    expect(byState.html).toMatch(
      /<a href="\/\?state=paused" data-filter="state" data-value="paused"><span class="state paused">paused<\/span> \d+<\/a>/,
    );
    const pausedGold = await overview({ state: 'paused', label: 'tier=gold', search: RUN });
    expect(pausedGold.names).toEqual([names[42]]);
    for (const name of paused) await call('POST', `/pollers/${name}/resume`);

    const byName = await overview({ search: `${RUN}-1` });
    expect(byName.names).toEqual(names.slice(10, 20));

    const none = await overview({ search: RUN, label: 'tier=platinum' });
    expect(none.names).toEqual([]);
    expect(text(none.html)).toContain('No poller matches.');

    for (const [query, error] of [
      [{ label: 'tier' }, 'label: the label filter must be key=value, e.g. tier=gold'],
      [{ state: 'sleepy' }, 'state:'],
    ] as const) {
      const refused = await call(
        'GET',
        `/dashboard/panel?${new URLSearchParams(query)}`,
        undefined,
        STATUS_TOKEN,
      );
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toContain(error);
    }
  });

  it('shows a misconfigured runtime poller as it reported itself, and finds it by its state', async () => {
    const name = `${RUN}-unset`;
    // Its ${TENANT_TOKEN} is not set: it reports itself misconfigured.
    await call('PUT', `/pollers/${name}`, config({ tier: 'gold' }, 'TENANT_TOKEN'));
    const found = await overview({ state: 'misconfigured', search: RUN });
    expect(found.names).toEqual([name]);
    expect(found.row(name)).toContain('<span class="state misconfigured">misconfigured</span>');
    expect(text(found.row(name))).toMatch(
      /reported \d+s ago · runs, lease and next wake-up on its page/,
    );
    await call('DELETE', `/pollers/${name}`);
  });
});

describe('the overview page', () => {
  it('has a search box, a key=value label filter, a state select and a pager, outside the refreshed panel, with no inline handler or style', async () => {
    const response = await exports.default.fetch('https://tidemark.test/');
    const nonce = /'nonce-([^']+)'/.exec(
      response.headers.get('content-security-policy') ?? '',
    )?.[1];
    const shell = await response.text();
    const controls = shell.split('<div id="panel">')[0] ?? '';
    expect(controls).toContain('<input id="filter-search" name="search" type="search"');
    expect(controls).toMatch(/<input id="filter-label" name="label"[^>]*pattern="[^"]+"/);
    const options = [...controls.matchAll(/<option value="(\w*)">/g)].map((match) => match[1]);
    expect(options).toEqual([
      '',
      'ok',
      'warning',
      'running',
      'failing',
      'lagging',
      'silent',
      'paused',
      'misconfigured',
    ]);
    for (const id of ['page-first', 'page-prev', 'page-next']) {
      expect(controls).toContain(`<button type="button" id="${id}">`);
    }
    expect(shell).toContain('data-fleet');
    expect(shell.match(/<script\b[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
    expect(shell).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    // A poller's page has no fleet controls.
    const poller = await (
      await exports.default.fetch('https://tidemark.test/dashboard/pollers/seed')
    ).text();
    expect(poller).not.toContain('id="filters"');
    const panel = (await overview({ search: RUN })).html;
    expect(panel).not.toMatch(/\sstyle=|\son[a-z]+=/i);
  });
});

describe('a runtime poller’s page', () => {
  it('renders with its config as written from the registry, secrets as ${NAME}, and no secret value', async () => {
    const name = `${RUN}-page`;
    const tenantSecret = 'tenant-secret-value-4e7a';
    const created = await call('PUT', `/pollers/${name}`, config({ tier: 'gold' }, 'TENANT_TOKEN'));
    expect(created.status).toBe(201);
    expect(
      (await call('PUT', `/pollers/${name}/secrets/TENANT_TOKEN`, { value: tenantSecret })).status,
    ).toBe(201);

    const response = await call('GET', `/dashboard/pollers/${name}/panel`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`data-poller-page="${name}"`);
    const written = /<pre class="config">([\s\S]*?)<\/pre>/.exec(html)?.[1] ?? '';
    expect(written).toContain('&quot;Authorization&quot;: &quot;Bearer ${TENANT_TOKEN}&quot;');
    expect(written).toContain('&quot;secret&quot;: &quot;${WEBHOOK_SECRET}&quot;');
    expect(written).toContain('&quot;every&quot;: &quot;60s&quot;');
    expect(text(html)).toContain('As written with PUT /pollers/:name (version 1)');
    for (const secret of [tenantSecret, ...Object.values(TEST_SECRETS)]) {
      expect(html).not.toContain(secret);
      expect(html).not.toContain(encodeURIComponent(secret));
    }
    expect(text(html)).toContain('runtime: created with PUT /pollers/:name (config version 1)');
    expect(text(html)).toMatch(/Schedule every 1m /);
    expect(text(html)).toMatch(/Next wake-up .*the next tick \(every 1m\)/);
    expect(html).toContain('href="/?label=tier%3Dgold"');
    expect(html).toContain(`data-action="run" data-poller="${name}"`);

    // Gone once deleted.
    await call('DELETE', `/pollers/${name}`);
    expect((await call('GET', `/dashboard/pollers/${name}/panel`)).status).toBe(404);
  });
});
