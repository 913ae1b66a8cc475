/**
 * `npm start`: the quick start. Checks the port, prepares local secrets and the demo database,
 * runs the Worker with `wrangler dev` (quietly: see dev-output.ts; `npm start -- --verbose`
 * shows everything), fires every cron of [triggers].crons (the watchdog) right away and then
 * on schedule (wrangler dev does not: it only offers /cdn-cgi/local/scheduled), starts each
 * poller's first run at once, and prints one line per run. A change of wrangler.toml or
 * .dev.vars restarts wrangler with it (config-watch.ts), so a new token works at once. Stopping it (Ctrl-C, SIGTERM to npm or to this process, or losing the terminal) stops
 * wrangler and workerd with it: see process-group.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Cron } from 'croner';
import { unstable_readConfig } from 'wrangler';
import { LOCAL_HOST, LOCAL_PORT } from '../src/cli/local-url.ts';
import { scheduleOf } from '../src/config/schedule.ts';
import { checkConfig } from './check-config.ts';
import { reloadMessage, watchConfig } from './config-watch.ts';
import { DEMO_POLLER, demoOAuthFlag, withDemoOAuth } from './demo-oauth.ts';
import { createDevOutputFilter } from './dev-output.ts';
import { fillDevVars, localPolicyArgs, missingDevVars, parseDevVars } from './dev-vars.ts';
import { firstRunRequest } from './first-run.ts';
import { portProblem } from './port.ts';
import { superviseGroup } from './process-group.ts';

const HOST = LOCAL_HOST;
const PORT = Number(process.env.PORT ?? LOCAL_PORT);
const BASE = `http://${HOST}:${PORT}`;
const VERBOSE = process.argv.includes('--verbose');
/**
 * wrangler's own entry point, run by this Node (22): its .bin shim would pick the PATH's node.
 * START_WRANGLER replaces it in the tests of this script (test/support/fake-wrangler.ts).
 */
const WRANGLER = process.env.START_WRANGLER ?? 'node_modules/wrangler/bin/wrangler.js';

/**
 * Creates .dev.vars from the committed example with fresh random tokens, a fresh webhook
 * signing secret and a fresh SECRETS_KEY; an existing one gets fresh values for any
 * placeholder or published secret, and the variables of the example it lacks (its own values
 * stay as they are).
 */
function ensureDevVars(): Record<string, string> {
  const example = readFileSync('.dev.vars.example', 'utf8');
  if (!existsSync('.dev.vars')) {
    writeFileSync('.dev.vars', fillDevVars(example));
    console.log(
      'created .dev.vars with fresh local tokens, WEBHOOK_SECRET and SECRETS_KEY (git-ignored)',
    );
  } else {
    const text = readFileSync('.dev.vars', 'utf8');
    const filled = fillDevVars(text);
    if (filled !== text) {
      writeFileSync('.dev.vars', filled);
      console.log('.dev.vars: replaced placeholder or published values with fresh ones');
    }
    const missing = missingDevVars(filled, example);
    if (missing.names.length > 0) {
      const joined = filled === '' || filled.endsWith('\n') ? filled : `${filled}\n`;
      writeFileSync('.dev.vars', joined + missing.lines);
      console.log(`.dev.vars: added ${missing.names.join(', ')} (new in .dev.vars.example)`);
    }
  }
  return parseDevVars(readFileSync('.dev.vars', 'utf8'));
}

/**
 * With DEMO_OAUTH on, POLLERS as `wrangler dev` should run them: the demo poller on
 * `source.auth = oauth2` against this Worker's demo token endpoint (demo-oauth.ts).
 */
function demoOAuthPollers(on: boolean): Record<string, unknown> | null {
  if (!on) return null;
  const pollers = withDemoOAuth(
    unstable_readConfig({ config: 'wrangler.toml' }).vars.POLLERS,
    BASE,
  );
  if (pollers === null) {
    console.log(`DEMO_OAUTH is on, but wrangler.toml has no ${DEMO_POLLER} poller to switch`);
  }
  return pollers;
}

/** Prints what is worth seeing of wrangler's output. */
function relay(streams: (Readable | null)[]): void {
  for (const stream of streams) {
    if (!stream) continue;
    const filter = createDevOutputFilter({ verbose: VERBOSE });
    createInterface({ input: stream }).on('line', (raw) => {
      const line = filter(raw);
      if (line !== undefined) console.log(line);
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
    const mirror = audit.mirror as { equal?: boolean } | undefined;
    const shown =
      mirror?.equal === undefined ? '' : `  mirror ${mirror.equal ? 'equal' : 'NOT equal'}`;
    const deletes =
      audit.deletes_delivered === undefined ? '' : `  deletes ${audit.deletes_delivered}`;
    console.log(
      `audit demo_sessions  produced ${audit.produced}  delivered ${audit.delivered}  missing_below_checkpoint ${audit.missing_below_checkpoint}${deletes}${shown}`,
    );
  } catch (error) {
    console.log(`audit unavailable: ${String(error)}`);
  }
}

/** Fires a cron's pollers the way Cloudflare would; says so when it could not. */
async function fire(cron: string): Promise<void> {
  try {
    await fetch(`${BASE}/cdn-cgi/local/scheduled?cron=${encodeURIComponent(cron)}`);
  } catch (error) {
    console.log(`could not fire cron ${cron}: ${String(error)}`);
  }
}

/** What a start or a reload runs: the secrets, the demo's OAuth switch and the checked config. */
interface Setup {
  secrets: Record<string, string>;
  config: ReturnType<typeof checkConfig>;
  /** wrangler dev's arguments. */
  args: string[];
  pollers: Record<string, unknown> | null;
}

/** Reads .dev.vars and wrangler.toml (as npm start runs them) and checks them. */
function setUp(): Setup {
  const secrets = ensureDevVars();
  const oauth = demoOAuthFlag(process.env, secrets);
  const pollers = demoOAuthPollers(oauth.on);
  const config = checkConfig({ secrets, strict: true, ...(pollers ? { pollers } : {}) });
  const quiet = VERBOSE ? [] : ['--log-level', 'log'];
  // --test-scheduled: crons are fired (by us), so no warning that they are not.
  const args = [
    'dev',
    '--port',
    String(PORT),
    '--ip',
    HOST,
    '--test-scheduled',
    // What runtime pollers may reach locally (docs/fleet.md, "What a runtime config may reach").
    ...localPolicyArgs(secrets),
    // DEMO_OAUTH: the Worker's flag as npm start reads it, and the demo poller on oauth2.
    ...oauth.args,
    ...(pollers ? ['--var', `POLLERS:${JSON.stringify(pollers)}`] : []),
    ...quiet,
  ];
  return { secrets, config, args, pollers };
}

/** One line to paste into another terminal: the CLI's variables and the tokens, for curl. */
function exportLine(secrets: Record<string, string>): string {
  const admin = secrets.ADMIN_TOKEN ?? '';
  return `export TIDEMARK_URL=${BASE} TIDEMARK_TOKEN=${admin} STATUS_TOKEN=${secrets.STATUS_TOKEN ?? ''} ADMIN_TOKEN=${admin}`;
}

/** The crons fired on schedule: replaced when a reload brings other crons. */
let cronJobs: Cron[] = [];

function scheduleCrons(crons: string[]): void {
  for (const job of cronJobs) job.stop();
  cronJobs = crons.map(
    (cron) =>
      new Cron(cron, { timezone: 'UTC' }, async () => {
        await fire(cron);
        setTimeout(printAudit, 5_000);
      }),
  );
}

async function main(): Promise<void> {
  if (!Number.isInteger(PORT) || PORT < 1 || PORT > 65_535) {
    console.error(`PORT=${process.env.PORT} is not a port number (1-65535)`);
    process.exit(1);
  }
  const busy = await portProblem(PORT, HOST);
  if (busy) {
    console.error(busy);
    process.exit(1);
  }
  let setup = setUp();
  const { secrets, config, pollers } = setup;
  bearer = { authorization: `Bearer ${secrets.STATUS_TOKEN ?? ''}` };
  if (config.errors.length > 0) {
    console.error('wrangler.toml has errors:');
    for (const error of config.errors) console.error(`  - ${error}`);
    process.exit(1);
  }
  const migrate = spawnSync(
    process.execPath,
    [WRANGLER, 'd1', 'migrations', 'apply', 'DB', '--local'],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CI: 'true' } },
  );
  if (migrate.status !== 0) process.exit(migrate.status ?? 1);

  const dev = superviseGroup(process.execPath, [WRANGLER, ...setup.args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0' },
    onStop: (reason) => console.log(`stopping wrangler and workerd (${reason})`),
  });
  relay([dev.child.stdout, dev.child.stderr]);
  try {
    await waitForWorker();
  } catch (error) {
    console.error(String(error));
    dev.stop('the Worker did not start', 1);
    return;
  }

  // Watched before the banner is out: a change made as soon as it is read is not missed.
  watchConfig(async (changed) => {
    const next = setUp();
    if (next.config.errors.length > 0) {
      console.log(`not reloaded: ${reloadMessage(changed).slice('reloaded: '.length)}, but:`);
      for (const error of next.config.errors) console.log(`  - ${error}`);
      console.log('  the Worker runs on as before; fix it and save again');
      return;
    }
    const child = await dev.restart([WRANGLER, ...next.args]);
    relay([child.stdout, child.stderr]);
    try {
      await waitForWorker();
    } catch (error) {
      console.error(String(error));
      dev.stop('the Worker did not start again', 1);
      return;
    }
    const tokensChanged = exportLine(next.secrets) !== exportLine(setup.secrets);
    setup = next;
    bearer = { authorization: `Bearer ${next.secrets.STATUS_TOKEN ?? ''}` };
    console.log(reloadMessage(changed));
    if (tokensChanged) console.log(`  new tokens: paste again\n${exportLine(next.secrets)}`);
    await Promise.all(next.config.crons.map(fire));
    scheduleCrons(next.config.crons);
  });

  const now = Date.now();
  const enabled = config.valid.filter((entry) => entry.config.enabled);
  const firstTicks = enabled.map((entry) => {
    const next = scheduleOf(entry.name, entry.config).next(now);
    return `${entry.name} at ${next === null ? '(never)' : new Date(next).toTimeString().slice(0, 8)}`;
  });
  const read = `Authorization: Bearer ${secrets.STATUS_TOKEN ?? '<STATUS_TOKEN>'}`;
  console.log(`
tidemark is running on ${BASE}
  dashboard  ${BASE}/   (enter the admin token below)
  admin token (ADMIN_TOKEN, from .dev.vars): ${secrets.ADMIN_TOKEN ?? '(not set)'}
  status     curl -H "${read}" ${BASE}/status
  metrics    curl -H "${read}" ${BASE}/metrics
  health     ${BASE}/healthz
  audit      curl -H "${read}" ${BASE}/demo/audit   (missing_below_checkpoint must stay 0)
${
  pollers
    ? `  oauth      DEMO_OAUTH is on: ${DEMO_POLLER} authenticates with source.auth = oauth2 (POST ${BASE}/demo/oauth/token,
             short-lived access tokens, single-use refresh tokens); see status.auth in ${BASE}/status/${DEMO_POLLER}
`
    : ''
}  watchdog   cron ${config.crons.join(', ')}: fired now and on schedule (wrangler dev does not fire crons)
  first run  now: it sets each poller's checkpoint (or catches up from one an earlier npm start
             left); new records arrive from the next tick: ${firstTicks.join(', ') || '(no poller enabled)'}
  reload     a change of wrangler.toml or .dev.vars restarts the Worker with it
  Ctrl-C stops everything: wrangler and workerd too
  For npx tidemark (and $STATUS_TOKEN, $ADMIN_TOKEN) in another terminal, paste:
${exportLine(secrets)}
`);
  scheduleCrons(config.crons);
  await Promise.all(config.crons.map(fire));
  for (const entry of enabled) void runNow(entry.name, secrets.ADMIN_TOKEN);
}

/** Starts a poller's first run now (firstRunRequest); says so when it could not. */
async function runNow(poller: string, adminToken: string | undefined): Promise<void> {
  try {
    await fetch(firstRunRequest(BASE, poller, adminToken ?? ''));
  } catch (error) {
    console.log(`could not start a first run of ${poller}: ${String(error)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
