/**
 * The browser test: starts the Worker with `wrangler dev`, opens the dashboard in headless
 * Chromium (Debian's, driven by playwright-core), enters the token, sees the pollers, clicks
 * "Run now" and sees the run appear, all under the Worker's Content-Security-Policy: any CSP
 * violation the page reports fails the test. Saves test-results/dashboard.png.
 *
 *   npm run test:e2e     (needs /usr/bin/chromium: apt-get install chromium)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const PORT = Number(process.env.E2E_PORT ?? 8791);
const BASE = `http://127.0.0.1:${PORT}`;
const ADMIN_TOKEN = 'e2e-admin-token-3c1d9f';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const wrangler = 'node_modules/.bin/wrangler';

function fail(message: string): never {
  console.error(`e2e: ${message}`);
  process.exit(1);
}

if (!existsSync(CHROMIUM))
  fail(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
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
    'STATUS_TOKEN:e2e-status-token-8b2a41',
    '--var',
    'DEMO_ERROR_RATE:0',
  ],
  { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, FORCE_COLOR: '0' } },
);
const cleanup = () => {
  dev.kill('SIGINT');
  rmSync(state, { recursive: true, force: true });
};

try {
  await waitFor(
    async () => (await fetch(`${BASE}/healthz`).catch(() => null)) !== null,
    60_000,
    'wrangler dev',
  );
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
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('#login button[type="submit"]');
    const row = page.locator('tr[data-poller="demo_sessions"]');
    await row.waitFor({ timeout: 15_000 });
    console.log('e2e: the dashboard lists demo_sessions');
    if ((await page.evaluate(() => location.href)).includes(ADMIN_TOKEN))
      fail('the token ended up in the URL');

    await row.locator('button[data-action="run"]').click();
    await page.waitForFunction(
      () =>
        /run demo_sessions: (success|failed|continued)/.test(
          document.getElementById('notice')?.textContent ?? '',
        ),
      undefined,
      { timeout: 30_000 },
    );
    await page
      .locator('tr[data-poller="demo_sessions"] td.last-run')
      .filter({ hasText: /success|failed|continued/ })
      .waitFor({ timeout: 15_000 });
    await page.locator('figure svg.chart').first().waitFor({ timeout: 15_000 });
    console.log(`e2e: "Run now" ran: ${await page.locator('#notice').textContent()}`);
    if (violations.length > 0)
      throw new Error(`the page broke its Content-Security-Policy:\n  ${violations.join('\n  ')}`);
    console.log('e2e: no Content-Security-Policy violation');
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/dashboard.png', fullPage: true });
    console.log('e2e: saved test-results/dashboard.png');
  } finally {
    await browser.close();
  }
} catch (error) {
  cleanup();
  fail(String(error));
}
cleanup();
process.exit(0);

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
