/**
 * The browser test: starts the Worker with `wrangler dev`, opens the dashboard in headless
 * Chromium (Debian's, driven by playwright-core) and uses it as an on-call engineer would,
 * all under the Worker's Content-Security-Policy: any CSP violation the page reports fails
 * the test. Besides the demo poller it runs `e2e_letters`, whose upstream and webhook
 * receiver are served by this script, so that its deliveries fail on cue and leave dead
 * letters to replay and discard from the UI, and `e2e-refused`, a runtime poller whose receiver
 * always refuses, so that a 390 px phone has dead letters (and their buttons) to show. Every
 * wait is on a condition, with a timeout.
 *
 * Screenshots (test-results/, git-ignored): dashboard-token.png (before a token),
 * dashboard.png (the overview), dashboard-poller.png,
 * dashboard-discard.png (the reason dialog), dashboard-390.png, dashboard-poller-390.png and
 * dashboard-dead-letters-390.png (a 390 px wide phone), dashboard-disconnected.png, dashboard-fleet.png (60 runtime pollers,
 * filtered by label and state), dashboard-fleet-390.png, and dashboard-reconcile-390.png (held
 * deletes at 390 px), dashboard-reconcile.png (after Confirm deletes), and dashboard-preview.png
 * and dashboard-preview-390.png (a paused poller's Preview).
 *
 *   npm run test:e2e     (needs /usr/bin/chromium: apt-get install chromium)
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Locator, type Page } from 'playwright-core';
import { unstable_readConfig } from 'wrangler';

const PORT = Number(process.env.E2E_PORT ?? 8791);
const BASE = `http://127.0.0.1:${PORT}`;
const ADMIN_TOKEN = 'e2e-admin-token-3c1d9f';
const STATUS_TOKEN = 'e2e-status-token-8b2a41';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = 'test-results';
const wrangler = 'node_modules/.bin/wrangler';
const LETTERS = 'e2e_letters';
/** Runtime pollers created over the API for the fleet views: more than a page (50). */
const FLEET = Array.from({ length: 60 }, (_, i) => `e2e-fleet-${String(i).padStart(2, '0')}`);
const tierOf = (i: number) => (i % 3 === 0 ? 'gold' : 'free');
const PAUSED = 'e2e-fleet-06';
/** A runtime poller with reconcile, whose listing finds every record gone. */
const RECONCILED = 'e2e-reconcile';
/** A runtime poller with max_attempts = 1 whose receiver (/refuse) refuses every delivery. */
const REFUSED = 'e2e-refused';
/** A paused runtime poller previewed from its page. */
const PREVIEWED = 'e2e-preview';

function fail(message: string): never {
  console.error(`e2e: ${message}`);
  process.exit(1);
}

if (!existsSync(CHROMIUM))
  fail(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);

/**
 * The upstream and webhook receiver of `e2e_letters`: three records, an upstream that answers
 * 503 while `upstreamFails` is set (a failed run), and a receiver that answers 500 while
 * `receiverFails` is set (with max_attempts = 1, each record becomes a dead letter). /refuse
 * is the receiver of `e2e-refused`, and answers 500 to every delivery.
 */
const started = Date.now();
const records = [1, 2, 3].map((n) => ({
  id: `e2e-${n}`,
  updated_at: new Date(started - (10 - n) * 60_000).toISOString(),
}));
/** What the failing upstream says: long enough that the dashboard cuts the run's error. */
const UPSTREAM_DOWN =
  'upstream down (e2e): the sessions cluster is being moved to new hardware; every request is refused until the move is over, retry later (end of message)';
let upstreamFails = true;
let receiverFails = true;
/** Deliveries to /hook, whatever it answered: a preview must add none. */
let hooksReceived = 0;
const fake: Server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://fake');
  request.resume();
  if (url.pathname === '/items' && upstreamFails) {
    response.writeHead(503, { 'content-type': 'text/plain' });
    response.end(UPSTREAM_DOWN);
  } else if (url.pathname === '/items') {
    const since = Date.parse(url.searchParams.get('since') ?? '');
    const items = records.filter((record) => Date.parse(record.updated_at) >= since);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ items }));
  } else if (url.pathname === '/all') {
    // The full listing of e2e-reconcile (reconcile.url): empty, so its deletes are held.
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ items: [] }));
  } else if (url.pathname === '/refuse') {
    request.on('end', () => {
      response.writeHead(500);
      response.end('receiver refuses everything (e2e)');
    });
  } else if (url.pathname === '/hook') {
    hooksReceived += 1;
    request.on('end', () => {
      response.writeHead(receiverFails ? 500 : 204);
      response.end(receiverFails ? 'receiver down (e2e)' : undefined);
    });
  } else {
    response.writeHead(404);
    response.end();
  }
});
await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
const fakeBase = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;

// The pollers of wrangler.toml, and one more whose deliveries this script controls.
const pollers = {
  ...(unstable_readConfig({ config: 'wrangler.toml' }).vars.POLLERS as Record<string, unknown>),
  [LETTERS]: {
    cron: '* * * * *',
    max_attempts: 1,
    alert_after: '10m',
    start_from: new Date(started - 30 * 60_000).toISOString(),
    source: { url: `${fakeBase}/items`, from_param: 'since', items: 'items', timeout: '5s' },
    deliver: {
      type: 'webhook',
      url: `${fakeBase}/hook`,
      secret: '${WEBHOOK_SECRET}',
      timeout: '5s',
    },
  },
};

const state = mkdtempSync(join(tmpdir(), 'tidemark-e2e-'));
const persist = ['--persist-to', state];
const migrate = spawnSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local', ...persist], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, CI: 'true' },
});
if (migrate.status !== 0) fail('could not apply the D1 migrations');

const dev = spawn(
  wrangler,
  [
    'dev',
    '--port',
    String(PORT),
    '--ip',
    '127.0.0.1',
    ...persist,
    '--var',
    `ADMIN_TOKEN:${ADMIN_TOKEN}`,
    '--var',
    `STATUS_TOKEN:${STATUS_TOKEN}`,
    '--var',
    `WEBHOOK_SECRET:whsec_${randomBytes(32).toString('base64')}`,
    '--var',
    'DEMO_ERROR_RATE:0',
    '--var',
    `POLLERS:${JSON.stringify(pollers)}`,
    // The runtime pollers below reach the fake upstream and receiver on this machine.
    '--var',
    `FLEET_POLICY:${JSON.stringify({ env: ['WEBHOOK_SECRET'], hosts: ['127.0.0.1'], allow_http: true })}`,
  ],
  { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, FORCE_COLOR: '0' } },
);
const cleanup = () => {
  dev.kill('SIGINT');
  fake.close();
  rmSync(state, { recursive: true, force: true });
};

const step = (message: string) => console.log(`e2e: ${message}`);

/** Waits until the notice says what `pattern` matches, and returns it. */
async function noticeMatches(page: Page, pattern: RegExp, timeout = 30_000): Promise<string> {
  await page.waitForFunction(
    ([source, flags]) =>
      new RegExp(source, flags).test(document.getElementById('notice')?.textContent ?? ''),
    [pattern.source, pattern.flags] as const,
    { timeout },
  );
  return (await page.locator('#notice').textContent()) ?? '';
}

/** Fails unless the page is no wider than the window (tables scroll inside their own box). */
async function noHorizontalOverflow(page: Page, what: string): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  if (scroll > client)
    throw new Error(`${what} overflows a ${client} px window: it is ${scroll} px wide`);
  step(`${what}: no horizontal overflow at ${client} px`);
}

/**
 * Fails unless each element `locator` finds is visible and lies within the window's width, with
 * no ancestor cutting it off: a cell scrolled out of sight in a sideways box does not count.
 */
async function onScreen(page: Page, locator: Locator, what: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  const count = await locator.count();
  if (count === 0) throw new Error(`no ${what} on the page`);
  for (let i = 0; i < count; i++) {
    const element = locator.nth(i);
    if (!(await element.isVisible())) throw new Error(`${what} (${i + 1} of ${count}) is hidden`);
    const box = await element.boundingBox();
    if (box === null || box.width === 0 || box.x < 0 || box.x + box.width > width)
      throw new Error(
        `${what} (${i + 1} of ${count}) is off a ${width} px window: ${JSON.stringify(box)}`,
      );
    const clipper = await element.evaluate((node) => {
      const rect = node.getBoundingClientRect();
      for (let parent = node.parentElement; parent; parent = parent.parentElement) {
        if (getComputedStyle(parent).overflowX === 'visible') continue;
        const around = parent.getBoundingClientRect();
        if (rect.left < around.left - 0.5 || rect.right > around.right + 0.5)
          return `${parent.tagName.toLowerCase()}.${parent.className}`;
      }
      return null;
    });
    if (clipper !== null)
      throw new Error(`${what} (${i + 1} of ${count}) is cut off by its ${clipper}`);
  }
  step(`${what}: ${count} on screen within ${width} px`);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}/${name}`, fullPage: true });
  step(`saved ${SHOTS}/${name}`);
}

try {
  await waitFor(
    async () => (await fetch(`${BASE}/healthz`).catch(() => null)) !== null,
    60_000,
    'wrangler dev',
  );
  mkdirSync(SHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Chromium logs every blocked script, style, fetch or frame as a console error; the
    // event listener (added by the browser, outside the page's CSP) reports the same.
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|securitypolicyviolation/i.test(message.text()))
        violations.push(message.text());
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(
          `securitypolicyviolation: ${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`,
        );
      });
    });
    const response = await page.goto(`${BASE}/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    if (!csp.includes("frame-ancestors 'none'") || !csp.includes("default-src 'none'"))
      throw new Error(`the dashboard is served without its Content-Security-Policy ("${csp}")`);

    // --- Before a token: the token form and nothing else -------------------------------
    await onlyTheTokenForm(page);
    await shot(page, 'dashboard-token.png');

    // --- The overview: run, pause, resume, notices in words -----------------------------
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login button[type="submit"]');
    const demo = page.locator('tr[data-poller="demo_sessions"]');
    await demo.waitFor({ timeout: 15_000 });
    await accessSays(page, /^Using ADMIN_TOKEN: you can run/);
    await page.locator(`tr[data-poller="${LETTERS}"]`).waitFor({ timeout: 15_000 });
    step('the dashboard lists demo_sessions and e2e_letters');
    if ((await page.evaluate(() => location.href)).includes(ADMIN_TOKEN))
      fail('the token ended up in the URL');

    await demo.locator('button[data-action="run"]').click();
    step(
      `"Run now": ${await noticeMatches(page, /^demo_sessions ran( and caught up| and failed)?:/)}`,
    );
    await demo
      .locator('td.last-run')
      .filter({ hasText: /success|failed|continued/ })
      .waitFor({ timeout: 15_000 });
    await page.locator('figure svg.chart').first().waitFor({ timeout: 15_000 });

    await demo.locator('button[data-action="pause"]').click();
    await noticeMatches(page, /^demo_sessions paused$/);
    await demo.locator('.state.paused').waitFor({ timeout: 15_000 });
    await demo.locator('button[data-action="run"]').click();
    step(`"Run now" while paused: ${await noticeMatches(page, /^demo_sessions is paused/)}`);
    await demo.locator('button[data-action="resume"]').click();
    await noticeMatches(page, /^demo_sessions resumed$/);
    await demo.locator('button[data-action="pause"]').waitFor({ timeout: 15_000 });
    const row = (await demo.textContent()) ?? '';
    if (/paused/.test(row)) throw new Error(`after Resume the row still says paused: ${row}`);
    step('"Pause" then "Resume": "demo_sessions resumed", and no stale "paused" in its row');
    // demo_sessions lags by seconds, under an alert_after of 5m (wrangler.toml).
    await lagAxisFitsTheLag(
      page.locator('figure:has(a[href="/dashboard/pollers/demo_sessions"]) svg.chart'),
      5 * 60,
    );

    await page.fill('#token', STATUS_TOKEN);
    await page.click('#login button[type="submit"]');
    await page.waitForFunction(
      () => document.getElementById('notice')?.textContent === '',
      undefined,
      {
        timeout: 5_000,
      },
    );
    await demo.waitFor({ timeout: 15_000 });
    step('a new token clears the last notice');
    await accessSays(page, /^Using STATUS_TOKEN: read only/);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login button[type="submit"]');

    // --- A failed run, then a run whose deliveries fail, then the poller page ----------------
    const letters = page.locator(`tr[data-poller="${LETTERS}"]`);
    await letters.locator('button[data-action="run"]').click();
    step(
      `a run against a failing upstream: ${await noticeMatches(page, new RegExp(`^${LETTERS} ran and failed: .*503`))}`,
    );
    await letters.locator('.state.failing').waitFor({ timeout: 15_000 });
    upstreamFails = false;
    await letters.locator('button[data-action="run"]').click();
    await noticeMatches(page, new RegExp(`^${LETTERS} ran`));
    await letters.locator('.state.warning').waitFor({ timeout: 15_000 });
    await page.locator(`tr[data-poller="${LETTERS}"] + tr.notes .warn`).waitFor({ timeout: 5_000 });
    step(`${LETTERS} has 3 dead letters and shows as a warning, not ok`);
    await shot(page, 'dashboard.png');

    await letters.locator(`a[href="/dashboard/pollers/${LETTERS}"]`).click();
    await page.locator(`section[data-poller-page="${LETTERS}"]`).waitFor({ timeout: 15_000 });
    const deadRows = page.locator('table.dead-letters tbody tr');
    await page.waitForFunction(
      () => document.querySelectorAll('table.dead-letters tbody tr').length === 3,
      undefined,
      { timeout: 15_000 },
    );
    for (const selector of [
      'section.poller ul.why',
      'dl.facts',
      'svg.chart .threshold',
      'svg.chart g.failed',
      'table.runs tbody tr.failed',
      'pre.config',
      'ul.audit',
    ]) {
      await page.locator(selector).first().waitFor({ timeout: 5_000 });
    }
    await failedRunError(page);
    await auditInWords(page);
    const config = (await page.locator('pre.config').textContent()) ?? '';
    if (!config.includes('${WEBHOOK_SECRET}') || config.includes('whsec_'))
      throw new Error(`the config shows a secret instead of \${WEBHOOK_SECRET}:\n${config}`);
    step(
      'the poller page shows state and why, facts, the chart, runs, dead letters, config, audit',
    );

    receiverFails = false;
    const firstKey = await deadRows.first().getAttribute('data-key');
    await deadRows.first().locator('button[data-action="replay"]').click();
    step(`Replay: ${await noticeMatches(page, /replayed and delivered$/)}`);
    await page.waitForFunction(
      (key) =>
        !Array.from(document.querySelectorAll('table.dead-letters tbody tr')).some(
          (tr) => tr.getAttribute('data-key') === key,
        ),
      firstKey,
      { timeout: 15_000 },
    );
    step('the replayed dead letter left the list');

    const secondKey = await deadRows.first().getAttribute('data-key');
    await deadRows.first().locator('button[data-action="discard"]').click();
    const dialog = page.locator('dialog#confirm');
    await dialog.waitFor({ state: 'visible', timeout: 5_000 });
    await page.click('#confirm-ok'); // no reason: the form refuses to submit
    if (!(await dialog.isVisible())) throw new Error('Discard went ahead without a reason');
    await page.fill('#confirm-reason', 'e2e: a record the receiver will never take');
    await shot(page, 'dashboard-discard.png');
    await page.click('#confirm-ok');
    step(
      `Discard: ${await noticeMatches(page, /discarded: e2e: a record the receiver will never take$/)}`,
    );
    await page.waitForFunction(
      (key) =>
        !Array.from(document.querySelectorAll('table.dead-letters tbody tr')).some(
          (tr) => tr.getAttribute('data-key') === key,
        ),
      secondKey,
      { timeout: 15_000 },
    );
    await page
      .locator('ul.audit li[data-audit="dead_letter.discarded"]')
      .filter({ hasText: 'e2e: a record the receiver will never take' })
      .waitFor({ timeout: 15_000 });
    step('the discarded dead letter left the list, its reason is in the audit log');

    await page.click('button[data-action="replay-all"]');
    await dialog.waitFor({ state: 'visible', timeout: 5_000 });
    await page.click('#confirm-cancel');
    await dialog.waitFor({ state: 'hidden', timeout: 5_000 });
    if ((await deadRows.count()) !== 1) throw new Error('Replay all ran although it was cancelled');
    await page.click('button[data-action="replay-all"]');
    await page.click('#confirm-ok');
    step(
      `Replay all: ${await noticeMatches(page, /^Replayed 1 dead letter of e2e_letters: 1 delivered$/)}`,
    );
    await page.locator('table.dead-letters').waitFor({ state: 'detached', timeout: 15_000 });
    await page.locator('section.poller h2 .state.ok').waitFor({ timeout: 15_000 });
    step('after Replay all the list is empty and the poller is ok');
    await shot(page, 'dashboard-poller.png');

    // --- A 390 px phone: every column of the overview, the dead letters and their buttons ---
    await refusedPoller();
    await page.setViewportSize({ width: 390, height: 844 });
    await noHorizontalOverflow(page, 'the poller page');
    await onScreen(
      page,
      page.locator('table.runs tr.run-error.failed p.full'),
      'the full error, at 390 px',
    );
    await onScreen(
      page,
      page.locator('table.runs tr.run.failed td'),
      "the failed run's cells, at 390 px",
    );
    await shot(page, 'dashboard-poller-390.png');
    await page.click('h1 a');
    await demo.waitFor({ timeout: 15_000 });
    const refused = page.locator(`tr[data-poller="${REFUSED}"]`);
    const refusedLetters = refused.locator('td[data-label="Dead letters"] a');
    await refusedLetters.filter({ hasText: /^[1-9]/ }).waitFor({ timeout: 15_000 });
    for (const name of ['demo_sessions', LETTERS, REFUSED]) {
      const poller = page.locator(`tr[data-poller="${name}"]`);
      await onScreen(page, poller.locator('td[data-label="Lag"]'), `${name}'s Lag cell`);
      await onScreen(
        page,
        poller.locator('td[data-label="Dead letters"]'),
        `${name}'s Dead letters cell`,
      );
      await onScreen(page, poller.locator('button[data-action]'), `${name}'s buttons`);
    }
    await onScreen(page, refusedLetters, `${REFUSED}'s dead letter count`);
    await noHorizontalOverflow(page, 'the overview');
    await shot(page, 'dashboard-390.png');
    await refusedLetters.click();
    await page.locator(`section[data-poller-page="${REFUSED}"]`).waitFor({ timeout: 15_000 });
    await page.waitForFunction(
      () => document.querySelectorAll('table.dead-letters tbody tr').length === 3,
      undefined,
      { timeout: 15_000 },
    );
    await onScreen(page, page.locator('button[data-action="replay-all"]'), 'Replay all');
    await onScreen(page, deadRows.locator('button[data-action="replay"]'), 'Replay');
    await onScreen(page, deadRows.locator('button[data-action="discard"]'), 'Discard');
    await noHorizontalOverflow(page, 'the dead letters');
    await shot(page, 'dashboard-dead-letters-390.png');
    await page.click('h1 a');
    await demo.waitFor({ timeout: 15_000 });
    await page.setViewportSize({ width: 1280, height: 900 });

    // --- Refreshes that fail: the banner says so, and goes once they work again -------------
    await page.route('**/dashboard/panel', (route) => route.abort('connectionrefused'));
    await page.locator('#banner').waitFor({ state: 'visible', timeout: 15_000 });
    await page.waitForFunction(
      () =>
        /^Disconnected — last updated \d+ s ago/.test(
          document.getElementById('banner-text')?.textContent ?? '',
        ),
      undefined,
      { timeout: 5_000 },
    );
    step(`refreshes failing: "${await page.locator('#banner-text').textContent()}"`);
    await shot(page, 'dashboard-disconnected.png');
    await page.unroute('**/dashboard/panel');
    await page.click('#retry');
    await page.locator('#banner').waitFor({ state: 'hidden', timeout: 15_000 });
    step('the banner goes once a refresh works again');

    // --- The fleet: 60 runtime pollers, paged and filtered -----------------------------
    await createFleet();
    await page.goto(`${BASE}/`);
    const fleetRows = page.locator('table.pollers tbody tr[data-poller^="e2e-fleet-"]');
    const range = page.locator('#page-range');
    /** Waits until the page shows exactly these fleet pollers, in this order. */
    const showing = async (names: string[], what: string) => {
      await page.waitForFunction(
        (expected) =>
          Array.from(
            document.querySelectorAll('table.pollers tbody tr[data-poller^="e2e-fleet-"]'),
            (tr) => tr.getAttribute('data-poller'),
          ).join(' ') === expected.join(' '),
        names,
        { timeout: 15_000 },
      );
      step(`${what}: ${names.length} rows, "${await range.textContent()}"`);
    };
    await page.fill('#filter-search', 'e2e-fleet');
    await page.click('#filters button[type="submit"]');
    await showing(FLEET.slice(0, 50), 'search "e2e-fleet", page 1');
    if ((await range.textContent()) !== 'pollers 1–50') throw new Error('page 1 is not 1–50');
    if (!(await page.locator('#page-prev').isDisabled())) throw new Error('Previous on page 1');
    await page.click('#page-next');
    await showing(FLEET.slice(50), 'Next');
    if ((await range.textContent()) !== 'pollers 51–60') throw new Error('page 2 is not 51–60');
    if (!(await page.locator('#page-next').isDisabled())) throw new Error('Next on the last page');
    await page.click('#page-prev');
    await showing(FLEET.slice(0, 50), 'Previous');
    await page.click('#page-next');
    await showing(FLEET.slice(50), 'Next again');
    await page.reload(); // the filters, the page and the way back survive a reload
    await showing(FLEET.slice(50), 'reloaded');
    await page.click('#page-prev');
    await showing(FLEET.slice(0, 50), 'Previous after the reload');

    const firstRow = fleetRows.first();
    if ((await firstRow.locator('.kind.runtime').count()) !== 1)
      throw new Error('a runtime poller is not marked runtime');
    await firstRow.locator('a.label', { hasText: 'tier=gold' }).click();
    const gold = FLEET.filter((_, i) => tierOf(i) === 'gold');
    await showing(gold, 'a click on the label tier=gold');
    if ((await page.inputValue('#filter-label')) !== 'tier=gold')
      throw new Error('the label filter box does not say tier=gold');
    await page.selectOption('#filter-state', 'paused');
    await showing([PAUSED], 'state paused');
    await fleetRows.first().locator('.state.paused').waitFor({ timeout: 5_000 });
    const url = await page.evaluate(() => location.href);
    if (
      !url.includes('state=paused') ||
      !url.includes('label=tier%3Dgold') ||
      url.includes(ADMIN_TOKEN)
    )
      throw new Error(`the URL does not hold the filters (or holds the token): ${url}`);
    await shot(page, 'dashboard-fleet.png');
    await page.goBack();
    await showing(gold, 'Back: state filter gone, the label filter kept');
    if ((await page.inputValue('#filter-state')) !== '')
      throw new Error('Back left the state filter set');
    await page.fill('#filter-search', 'e2e-fleet-1');
    await page.click('#filters button[type="submit"]');
    await showing(
      gold.filter((name) => name.startsWith('e2e-fleet-1')),
      'search "e2e-fleet-1"',
    );
    await page.click('#filter-clear');
    await page.locator('tr[data-poller="demo_sessions"]').waitFor({ timeout: 15_000 });
    step('Clear: every poller again, the static ones first by name');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.fill('#filter-label', 'tier=gold');
    await page.click('#filters button[type="submit"]');
    await showing(gold, 'at 390 px, tier=gold');
    await noHorizontalOverflow(page, 'the filtered overview');
    await shot(page, 'dashboard-fleet-390.png');
    await page.setViewportSize({ width: 1280, height: 900 });

    await fleetRows.first().locator(`a[href="/dashboard/pollers/${gold[0]}"]`).first().click();
    await page.locator(`section[data-poller-page="${gold[0]}"]`).waitFor({ timeout: 15_000 });
    const written = (await page.locator('pre.config').textContent()) ?? '';
    if (!written.includes('${WEBHOOK_SECRET}') || written.includes('whsec_'))
      throw new Error(`a runtime poller's config shows a secret:\n${written}`);
    await page.locator('dl.facts dd', { hasText: 'runtime: created with PUT' }).waitFor();
    step(`a runtime poller's page shows its config as written, \${WEBHOOK_SECRET} and all`);

    // --- Reconciliation: held deletes, Reconcile now and Confirm deletes -------------------
    await reconciliation(page);

    // --- Preview: a paused poller read from its page, nothing delivered ---------------------
    await previewing(page);

    if (violations.length > 0)
      throw new Error(`the page broke its Content-Security-Policy:\n  ${violations.join('\n  ')}`);
    step('no Content-Security-Policy violation');
  } finally {
    await browser.close();
  }
} catch (error) {
  cleanup();
  fail(String(error));
}
cleanup();
process.exit(0);

/** A call to the admin API. */
function admin(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/**
 * Creates `e2e-refused` over the admin API and runs it once: with max_attempts = 1 and a
 * receiver that refuses everything, its three records become dead letters.
 */
async function refusedPoller(): Promise<void> {
  const created = await admin('PUT', `/pollers/${REFUSED}`, {
    cron: '0 0 1 1 *', // no tick of its own: its dead letters stay as the one run left them
    max_attempts: 1,
    start_from: new Date(started - 30 * 60_000).toISOString(),
    source: { url: `${fakeBase}/items`, from_param: 'since', items: 'items' },
    deliver: { type: 'webhook', url: `${fakeBase}/refuse`, secret: '${WEBHOOK_SECRET}' },
  });
  if (created.status !== 201)
    throw new Error(`PUT /pollers/${REFUSED} answered ${created.status}: ${await created.text()}`);
  const ran = await admin('POST', `/pollers/${REFUSED}/run`);
  if (!ran.ok) throw new Error(`POST /pollers/${REFUSED}/run answered ${ran.status}`);
  const letters = await admin('GET', `/pollers/${REFUSED}/dead-letters`);
  const { items } = (await letters.json()) as { items?: unknown[] };
  if (items?.length !== 3)
    throw new Error(`${REFUSED} has ${items?.length} dead letters after its run, not 3`);
  step(`created ${REFUSED} over the API; its run left 3 dead letters`);
}

/** Creates the fleet over the admin API, 20 at a time, and pauses one gold poller. */
async function createFleet(): Promise<void> {
  for (let start = 0; start < FLEET.length; start += 20) {
    const answers = await Promise.all(
      FLEET.slice(start, start + 20).map((name, i) =>
        admin('PUT', `/pollers/${name}`, {
          every: '5m',
          labels: { tier: tierOf(start + i) },
          source: { url: `${fakeBase}/items`, from_param: 'since', items: 'items' },
          deliver: { type: 'webhook', url: `${fakeBase}/hook`, secret: '${WEBHOOK_SECRET}' },
        }),
      ),
    );
    const refused = answers.find((answer) => answer.status !== 201);
    if (refused)
      throw new Error(`PUT /pollers/… answered ${refused.status}: ${await refused.text()}`);
  }
  const paused = await admin('POST', `/pollers/${PAUSED}/pause`, { reason: 'e2e' });
  if (!paused.ok) throw new Error(`could not pause ${PAUSED}: ${paused.status}`);
  step(`created ${FLEET.length} runtime pollers over the API, ${PAUSED} paused`);
}

/**
 * A runtime poller with reconcile whose listing (/all) is empty: after a run delivers the
 * three records, "Reconcile now" finds all three gone and holds the deletes; the poller page
 * says so with "Confirm deletes", which asks first, then delivers them.
 */
async function reconciliation(page: Page): Promise<void> {
  const name = RECONCILED;
  const created = await admin('PUT', `/pollers/${name}`, {
    // No tick of its own meanwhile: a second listing would agree and deliver the held deletes.
    cron: '0 0 1 1 *',
    start_from: new Date(started - 30 * 60_000).toISOString(),
    source: { url: `${fakeBase}/items`, from_param: 'since', items: 'items' },
    deliver: { type: 'webhook', url: `${fakeBase}/hook`, secret: '${WEBHOOK_SECRET}' },
    reconcile: { every: '1h', url: `${fakeBase}/all` },
  });
  if (created.status !== 201)
    throw new Error(`PUT /pollers/${name} answered ${created.status}: ${await created.text()}`);
  const ran = await admin('POST', `/pollers/${name}/run`);
  if (!ran.ok) throw new Error(`POST /pollers/${name}/run answered ${ran.status}`);
  await new Promise((resolve) => setTimeout(resolve, 50));

  await page.goto(`${BASE}/dashboard/pollers/${name}`);
  const section = page.locator('div.reconcile');
  await section.waitFor({ timeout: 15_000 });
  await section.locator('button[data-action="reconcile"]').click();
  step(
    `"Reconcile now": ${await noticeMatches(page, new RegExp(`^Listing of ${name} requested`))}`,
  );
  const held = page.locator('div.held');
  await held.waitFor({ timeout: 15_000 });
  step(`held deletes: "${((await held.locator('p').textContent()) ?? '').replace(/\s+/g, ' ')}"`);
  const pointers = await page.locator('ul.why a[href="#reconcile"]').count();
  if (pointers !== 1) throw new Error(`the why list points to the section ${pointers} times`);

  await page.setViewportSize({ width: 390, height: 844 });
  await noHorizontalOverflow(page, 'the poller page with held deletes');
  await shot(page, 'dashboard-reconcile-390.png');
  await page.setViewportSize({ width: 1280, height: 900 });

  await held.locator('button[data-action="reconcile-confirm"]').click();
  const dialog = page.locator('dialog#confirm');
  await dialog.waitFor({ state: 'visible', timeout: 5_000 });
  const asked = (await page.locator('#confirm-text').textContent()) ?? '';
  if (!asked.startsWith(`Deliver the 3 held deletes of ${name}?`))
    throw new Error(`Confirm deletes asks: ${asked}`);
  await page.click('#confirm-ok');
  step(
    `"Confirm deletes": ${await noticeMatches(page, new RegExp(`^Confirmed 3 held deletes of ${name}`))}`,
  );
  await held.waitFor({ state: 'detached', timeout: 15_000 });
  await section.locator('dd', { hasText: 'its changes delivered' }).waitFor({ timeout: 15_000 });
  step('after the confirm the held deletes are gone and the last listing delivered');
  await auditInWords(page);
  await shot(page, 'dashboard-reconcile.png');
}

/**
 * Before a token is given the page is its title and the token form (and the line asking for
 * a token): no filter, pager, panel, banner, "Forget token" or which-token line.
 */
async function onlyTheTokenForm(page: Page): Promise<void> {
  const shown = await page.evaluate(() =>
    Array.from(document.body.children)
      .filter((element) => element.checkVisibility() && (element.textContent ?? '').trim() !== '')
      .map((element) => element.id || element.tagName.toLowerCase()),
  );
  if (shown.join(' ') !== 'h1 login message')
    throw new Error(`before a token the page shows ${shown.join(', ')}`);
  if (await page.locator('#forget').isVisible())
    throw new Error('"Forget token" is shown before a token is given');
  step(`before a token the page shows only the token form: ${shown.join(', ')}`);
}

/** Waits until the page says which token is in use, in these words. */
async function accessSays(page: Page, pattern: RegExp): Promise<void> {
  await page.waitForFunction(
    ([source]) => new RegExp(source).test(document.getElementById('access')?.textContent ?? ''),
    [pattern.source] as const,
    { timeout: 15_000 },
  );
  step(`the page says: "${await page.locator('#access').textContent()}"`);
}

/**
 * The failed run's error on its own row under the run: decoded (the page URL's `%3A` as
 * `:`), cut, the whole of it on a click, and on screen at this width.
 */
async function failedRunError(page: Page): Promise<void> {
  const row = page.locator('table.runs tr.run.failed + tr.run-error.failed').first();
  await row.waitFor({ timeout: 15_000 });
  const cut = (await row.locator('summary .cut').textContent()) ?? '';
  if (cut.includes('%3A') || !/since=\d{4}-\d\d-\d\dT\d\d:\d\d/.test(cut))
    throw new Error(`the failed run's error is not decoded: ${cut}`);
  if (cut.includes('(end of message)')) throw new Error(`the long error is not cut: ${cut}`);
  await onScreen(page, row.locator('summary'), "the failed run's error, cut");
  await row.locator('summary').click();
  const full = row.locator('p.full');
  await full.waitFor({ state: 'visible', timeout: 5_000 });
  const text = (await full.textContent()) ?? '';
  if (!text.includes('(end of message)') || text.includes('%3A'))
    throw new Error(`the whole error is not shown, decoded: ${text}`);
  await onScreen(page, full, "the failed run's whole error");
  step(`the failed run's error, decoded and whole after a click: "${text.slice(0, 90)}…"`);
}

/** The lag chart's axis fits the lag observed: far below alert_after, the axis tops out below it. */
async function lagAxisFitsTheLag(chart: Locator, alertAfterSeconds: number): Promise<void> {
  const ticks = await chart.locator('.lag-tick').allTextContents();
  const top = ticks.at(-1) ?? '';
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[top.slice(-1)] ?? Number.NaN;
  const seconds = Number.parseFloat(top) * unit;
  if (!(seconds < alertAfterSeconds))
    throw new Error(
      `the lag axis tops out at ${top}, above alert_after: ticks ${ticks.join(', ')}`,
    );
  await chart.locator('.threshold.above').waitFor({ timeout: 5_000 });
  step(`the lag axis tops out at ${top} (the lag seen), alert_after named above the chart`);
}

/** Every audit line is a sentence: no raw JSON (braces, brackets or quoted keys). */
async function auditInWords(page: Page): Promise<void> {
  const lines = await page.locator('ul.audit li').allTextContents();
  if (lines.length === 0) throw new Error('no audit line on the page');
  const raw = lines.filter((line) => /[{}[\]]|"\w+":/.test(line));
  if (raw.length > 0) throw new Error(`audit lines in raw JSON:\n  ${raw.join('\n  ')}`);
  step(`${lines.length} audit lines, each in words`);
}

/**
 * A paused runtime poller (it never runs) previewed from its page: the answer shows below
 * the panel, its three records and their request, stays there across the panel's refresh
 * (every 5 s), and fits a 390 px phone; the poller's receiver got nothing.
 */
async function previewing(page: Page): Promise<void> {
  const name = PREVIEWED;
  const created = await admin('PUT', `/pollers/${name}`, {
    every: '1d',
    start_from: new Date(started - 30 * 60_000).toISOString(),
    source: { url: `${fakeBase}/items`, from_param: 'since', items: 'items' },
    deliver: { type: 'webhook', url: `${fakeBase}/hook`, secret: '${WEBHOOK_SECRET}' },
  });
  if (created.status !== 201)
    throw new Error(`PUT /pollers/${name} answered ${created.status}: ${await created.text()}`);
  await admin('POST', `/pollers/${name}/pause`, { reason: 'previewed only' });
  const hooks = hooksReceived;

  await page.goto(`${BASE}/dashboard/pollers/${name}`);
  await page.locator(`section[data-poller-page="${name}"]`).waitFor({ timeout: 15_000 });
  await page.locator(`button[data-action="preview"][data-poller="${name}"]`).click();
  step(`"Preview": ${await noticeMatches(page, new RegExp(`^Preview of ${name}: 3 records`))}`);
  const result = page.locator('#preview-result');
  for (const record of records)
    await result.locator('td', { hasText: record.id }).first().waitFor();
  await result.locator('td', { hasText: `${fakeBase}/items?since=` }).waitFor();
  // The panel refreshes every 5 s: the answer is outside it, and stays.
  await page.waitForTimeout(6_000);
  if ((await result.locator('td', { hasText: 'e2e-1' }).count()) === 0)
    throw new Error("the panel's refresh took the preview away");
  await page.setViewportSize({ width: 390, height: 844 });
  await noHorizontalOverflow(page, 'the poller page with a preview');
  await shot(page, 'dashboard-preview-390.png');
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot(page, 'dashboard-preview.png');
  if (hooksReceived !== hooks) throw new Error('a preview delivered something');
  step(
    'the preview shows its records and request, below a refreshing panel, and delivered nothing',
  );
}

async function waitFor(
  check: () => Promise<boolean>,
  timeout: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  fail(`${what} did not come up within ${timeout / 1000}s`);
}
