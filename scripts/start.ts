/**
 * `npm start`: the quick start. Prepares local secrets and the demo database, runs the
 * Worker with `wrangler dev`, fires every cron of [triggers].crons on schedule (wrangler dev
 * does not: it only offers /cdn-cgi/local/scheduled), and prints one line per run.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Cron } from 'croner';
import { checkConfig } from './check-config.ts';
import { fillDevVars, parseDevVars } from './dev-vars.ts';

const PORT = Number(process.env.PORT ?? 8787);
const BASE = `http://127.0.0.1:${PORT}`;
const wrangler = 'node_modules/.bin/wrangler';

/**
 * Creates .dev.vars from the committed example with fresh random tokens and a fresh webhook
 * signing secret; an existing one gets fresh values for any placeholder or published secret.
 */
function ensureDevVars(): Record<string, string> {
  if (!existsSync('.dev.vars')) {
    writeFileSync('.dev.vars', fillDevVars(readFileSync('.dev.vars.example', 'utf8')));
    console.log('created .dev.vars with fresh local tokens and WEBHOOK_SECRET (git-ignored)');
  } else {
    const text = readFileSync('.dev.vars', 'utf8');
    const filled = fillDevVars(text);
    if (filled !== text) {
      writeFileSync('.dev.vars', filled);
      console.log('.dev.vars: replaced placeholder or published values with fresh ones');
    }
  }
  return parseDevVars(readFileSync('.dev.vars', 'utf8'));
}

/** Keeps both ends of a long message: where it happened and what the upstream said. */
function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max / 2)}…${text.slice(-max / 2)}`;
}

/** One terminal line for a run's structured log line. */
function describeRun(line: Record<string, unknown>): string {
  const checkpoint = typeof line.checkpoint === 'string' ? line.checkpoint : null;
  const lag = checkpoint ? `${Math.round((Date.now() - Date.parse(checkpoint)) / 1000)}s` : '-';
  const error = typeof line.error === 'string' ? `  (${shorten(line.error, 160)})` : '';
  return `run  ${String(line.poller).padEnd(16)} ${String(line.outcome).padEnd(10)} records ${String(line.records).padStart(4)}  checkpoint ${checkpoint ?? '-'}  lag ${lag}${error}`;
}

/** wrangler dev lines that say nothing to a demo user (requests we make; offline cf lookups). */
const NOISE = [
  /\[wrangler:info\] (GET|POST) \/(cdn-cgi|status|demo|\s)/,
  /Unable to fetch the `Request\.cf` object/,
  /getaddrinfo ENOTFOUND workers\.cloudflare\.com/,
  /^\s+at .*(GetAddrInfoReqWrap|callbackTrampoline)/,
];

function relay(child: ChildProcess): void {
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on('line', (raw) => {
      const start = raw.indexOf('{"event"');
      if (start >= 0) {
        try {
          const line = JSON.parse(raw.slice(start)) as Record<string, unknown>;
          if (line.event === 'run') return console.log(describeRun(line));
          return console.log(`${line.event}  ${JSON.stringify(line)}`);
        } catch {
          // not ours: print as is
        }
      }
      if (NOISE.some((pattern) => pattern.test(raw))) return;
      console.log(raw);
    });
  }
}

async function waitForWorker(): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    try {
      if ((await fetch(`${BASE}/`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the Worker did not answer on ${BASE} within a minute`);
}

let bearer: Record<string, string> = {};

async function printAudit(): Promise<void> {
  try {
    const audit = (await (await fetch(`${BASE}/demo/audit`, { headers: bearer })).json()) as Record<
      string,
      unknown
    >;
    console.log(
      `audit demo_sessions  produced ${audit.produced}  delivered ${audit.delivered}  missing_below_checkpoint ${audit.missing_below_checkpoint}`,
    );
  } catch (error) {
    console.log(`audit unavailable: ${String(error)}`);
  }
}

async function main(): Promise<void> {
  const secrets = ensureDevVars();
  bearer = { authorization: `Bearer ${secrets.STATUS_TOKEN ?? ''}` };
  const config = checkConfig({ secrets });
  if (config.errors.length > 0) {
    console.error('wrangler.toml POLLERS has errors:');
    for (const error of config.errors) console.error(`  - ${error}`);
    process.exit(1);
  }
  const migrate = spawnSync(wrangler, ['d1', 'migrations', 'apply', 'DB', '--local'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, CI: 'true' },
  });
  if (migrate.status !== 0) process.exit(migrate.status ?? 1);

  const dev = spawn(wrangler, ['dev', '--port', String(PORT), '--ip', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  relay(dev);
  const stop = () => {
    dev.kill('SIGINT');
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  dev.on('exit', (code) => process.exit(code ?? 0));

  await waitForWorker();
  console.log(`
tidemark is running on ${BASE}
  dashboard  ${BASE}/   (enter the admin token below)
  admin token (ADMIN_TOKEN, from .dev.vars): ${secrets.ADMIN_TOKEN ?? '(not set)'}
  status     curl -H "Authorization: Bearer ${secrets.STATUS_TOKEN ?? '<STATUS_TOKEN>'}" ${BASE}/status
  metrics    curl -H "Authorization: Bearer ${secrets.STATUS_TOKEN ?? '<STATUS_TOKEN>'}" ${BASE}/metrics
  health     ${BASE}/healthz
  audit      curl -H "Authorization: Bearer ${secrets.STATUS_TOKEN ?? '<STATUS_TOKEN>'}" ${BASE}/demo/audit   (missing_below_checkpoint must stay 0)
  crons      ${config.crons.join(', ')} fired locally on schedule; Ctrl-C stops
`);
  for (const cron of config.crons) {
    new Cron(cron, { timezone: 'UTC' }, async () => {
      try {
        await fetch(`${BASE}/cdn-cgi/local/scheduled?cron=${encodeURIComponent(cron)}`);
      } catch (error) {
        console.log(`could not fire cron ${cron}: ${String(error)}`);
      }
      setTimeout(printAudit, 5_000);
    });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
