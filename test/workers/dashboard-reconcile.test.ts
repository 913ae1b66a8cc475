import { runDurableObjectAlarm } from 'cloudflare:test';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ReconcileView } from '../../src/poller/reconcile-view.ts';
import { pageText, pollerPage } from '../support/dashboard-page.ts';
import { api, createPoller, objectOf } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
const { STATUS_TOKEN } = TEST_SECRETS;
const LISTING = 'https://upstream.test/v1/all';

let upstream: FakeUpstream;
let receiver: FakeReceiver;
/** What the full listing (reconcile.url) answers: these ids, or a scripted response. */
let listed: string[];
/** What the next listings answer, in turn, before `listed`. */
let listedNext: string[][];
let listingFails: (() => Response) | null;

beforeEach(() => {
  upstream = new FakeUpstream();
  listed = [];
  listedNext = [];
  listingFails = null;
  const host = {
    handle(request: Request): Promise<Response> {
      if (request.url.split('?')[0] !== LISTING) return upstream.handle(request);
      if (listingFails) return Promise.resolve(listingFails());
      const ids = listedNext.shift() ?? listed;
      const sessions = ids.map((id) => ({ id, updated_at: new Date().toISOString() }));
      return Promise.resolve(Response.json({ sessions, next_cursor: null }));
    },
  };
  ({ receiver } = installFakes({ 'upstream.test': host }));
});

/** A runtime poller with reconcile, that has delivered the records a, b and c. */
async function reconciled(reconcile: Record<string, unknown> = {}) {
  const name = await createPoller('dash-reconcile', {
    sinceMs: 30 * MINUTE,
    // No tick of its own during the test: only the runs the test starts list, so no second
    // listing agrees with held deletes before the test confirms them.
    every: undefined,
    cron: '0 0 1 1 *',
    reconcile: { every: '1h', url: LISTING, ...reconcile },
  });
  for (const [i, id] of ['a', 'b', 'c'].entries()) upstream.add(id, Date.now() - (20 - i) * MINUTE);
  await objectOf(name).runNow();
  expect(receiver.ids()).toEqual(['a', 'b', 'c']);
  // A listing counts as deleted only what was delivered before it began.
  await new Promise((resolve) => setTimeout(resolve, 5));
  return name;
}

/** Runs what an admin's call to the reconcile routes triggered, until `done` holds. */
async function runUntil(name: string, done: (view: ReconcileView) => boolean) {
  await runDurableObjectAlarm(objectOf(name));
  return vi.waitUntil(
    async () => {
      const view = (await objectOf(name).status()).reconcile;
      return view !== null && done(view) ? view : false;
    },
    { timeout: 3_000, interval: 10 },
  );
}

const page = pollerPage;

const text = pageText;

/** The Reconciliation section's HTML. */
const section = (html: string) =>
  /<h3 id="reconcile">Reconciliation<\/h3>([\s\S]*?)<h3>/.exec(html)?.[1] ?? '';

/** A fact of the section, by its term. */
const fact = (html: string, term: string) =>
  text(new RegExp(`<dt>${term}</dt>\\s*<dd>([\\s\\S]*?)</dd>`).exec(section(html))?.[1] ?? '');

/** The page's "why" lines. */
const whyLines = (html: string) =>
  [
    ...(/<ul class="why">([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '').matchAll(
      /<li[^>]*>([\s\S]*?)<\/li>/g,
    ),
  ].map((match) => match[1] ?? '');

const occurrences = (html: string, part: string) => html.split(part).length - 1;

describe('reconciliation on the poller page', () => {
  it('a poller page shows held deletes with a confirm button, says so once, and shows them gone once confirmed', async () => {
    const name = await reconciled();
    listed = []; // an empty listing: every known id looks deleted
    const requested = await api('POST', `/pollers/${name}/reconcile`);
    expect(requested.status).toBe(202);
    await runUntil(name, (view) => view.held !== null);

    const html = await page(name);
    const held = /<div class="held"[^>]*>([\s\S]*?)<\/div>/.exec(section(html))?.[1] ?? '';
    expect(text(held)).toMatch(
      /^3 deletes held of 3 known ids, since \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: the listing was empty: 3 deletes of 3 known ids\. None is delivered until an admin confirms them: no listing agrees with an empty one\. Confirm deletes \(3\)$/,
    );
    expect(held).toContain(
      `data-action="reconcile-confirm" data-poller="${name}"\n      data-count="3">Confirm deletes (3)</button>`,
    );
    expect(section(html)).toContain(
      `<button type="button" data-action="reconcile" data-poller="${name}">Reconcile now</button>`,
    );
    expect(fact(html, 'Last listing')).toMatch(
      /^finished \S+ \S+ \(\d+s ago, took [\d.]+ m?s\): 0 ids listed, 3 deletes, 0 upserts; its deletes held \(above\)$/,
    );
    expect(fact(html, 'Next listing')).toMatch(
      /^\S+ \S+ \(in (60|59)m\), every 1h, to check the held deletes$/,
    );
    // Told once, in the section with the button: the why list points there instead of
    // repeating the alert with the API call to make.
    expect(occurrences(html, 'the listing was empty')).toBe(1);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i); // the page's CSP allows neither
    expect(html).not.toContain('reconcile/confirm');
    const pointer = whyLines(html).filter((line) => line.includes('#reconcile'));
    expect(pointer.map(text)).toEqual([
      'Reconciliation holds 3 deletes: see Reconciliation to confirm them.',
    ]);
    expect(html).toContain(
      '<li class="error">Reconciliation holds 3 deletes: see <a href="#reconcile">',
    );

    const confirmed = await api('POST', `/pollers/${name}/reconcile/confirm`);
    expect(await confirmed.json()).toMatchObject({ outcome: 'confirmed', deletes: 3 });
    await runUntil(name, (view) => view.held === null && view.listing === null);
    await vi.waitUntil(() => receiver.deliveries.filter((d) => d.op === 'delete').length === 3);
    const after = await page(name);
    expect(after).not.toContain('class="held"');
    expect(after).not.toContain('data-action="reconcile-confirm"');
    expect(after).not.toContain('#reconcile"');
    expect(fact(after, 'Last listing')).toContain('its changes delivered');
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller page shows the last listing with its deletes and upserts, nothing pending and the next listing time', async () => {
    const name = await reconciled({ max_deletes: '50%' });
    listed = ['a', 'b', 'd']; // c is gone, d is new
    await api('POST', `/pollers/${name}/reconcile`);
    await runUntil(name, (view) => view.last_listing?.outcome === 'agreed' && view.pending === 0);
    await vi.waitUntil(() => receiver.deliveries.length === 5);

    const html = await page(name, STATUS_TOKEN);
    expect(html).not.toContain('class="held"');
    expect(html).not.toContain('data-action="reconcile-confirm"');
    // The second listing, at once, confirmed the first one's delete; d was upserted by the first.
    expect(fact(html, 'Last listing')).toMatch(
      /: 3 ids listed, 1 delete, 0 upserts; it found deletes an earlier listing found again: those delivered$/,
    );
    expect(fact(html, 'In progress')).toBe('none');
    expect(fact(html, 'Pending')).toBe('nothing');
    expect(fact(html, 'Error')).toBe('none');
    expect(fact(html, 'Next listing')).toMatch(/^\S+ \S+ \(in (60|59)m\), every 1h$/);
    expect(section(html)).toContain('data-action="reconcile"');
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller page shows the deletes waiting for the next listing to confirm them', async () => {
    const name = await reconciled({ max_deletes: '50%' });
    // The first lacks c; the second (at once) lists c and lacks b; b waits for the third.
    listedNext = [
      ['a', 'b'],
      ['a', 'c'],
    ];
    await api('POST', `/pollers/${name}/reconcile`);
    await runUntil(name, (view) => view.last_listing?.outcome === 'unconfirmed' && !view.listing);

    const html = await page(name, STATUS_TOKEN);
    expect(fact(html, 'Last listing')).toMatch(
      /: 2 ids listed, 1 delete, 0 upserts; its deletes wait for the next listing to confirm them$/,
    );
    expect(fact(html, 'Pending')).toBe(
      'nothing; 1 delete waiting for the next listing to confirm it',
    );
    expect(receiver.deliveries.filter((d) => d.op === 'delete')).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it("a poller page shows a failing listing's error, escaped, with when it is tried again", async () => {
    const name = await reconciled();
    listingFails = () => new Response('<b>listing down</b>', { status: 500 });
    await api('POST', `/pollers/${name}/reconcile`);
    await runUntil(name, (view) => view.error !== null);

    const html = await page(name);
    expect(html).not.toContain('<b>listing down</b>');
    expect(fact(html, 'Error')).toMatch(
      /^listing page 1: .*HTTP 500.*&lt;b&gt;listing down&lt;\/b&gt;.* at \S+ \S+; tried again in \d+[sm] \(\S+ \S+\)$/,
    );
    // The warning keeps its words in the why list, and points to the section.
    const warning = whyLines(html).find((line) => line.startsWith('reconcile: listing page 1'));
    expect(warning).toMatch(
      /\(1 failure in a row\): see <a href="#reconcile">Reconciliation<\/a>\.$/,
    );
    expect(fact(html, 'In progress')).toMatch(
      /^since \S+ \S+ \(\d+s ago\): 0 pages, 0 ids so far$/,
    );
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller page without reconcile shows no Reconciliation section', async () => {
    const html = await page('seed');
    expect(html).not.toContain('id="reconcile"');
    expect(html).not.toContain('data-action="reconcile');
  });
});
