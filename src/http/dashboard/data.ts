import { loadPollers, type PollerEntry } from '../../config/load.ts';
import { runView } from '../../poller/status.ts';
import { pollerObject } from '../known-poller.ts';
import { configTemplate } from './config-view.ts';
import type { DeadLetterPage } from './dead-letter-list.ts';
import type { PollerFacts } from './explain.ts';
import type { OverviewPoller } from './panel.ts';
import type { PollerPage } from './poller-page.ts';

/** Runs in each overview chart; the poller page shows the whole history (100). */
const OVERVIEW_RUNS = 60;
const PAGE_RUNS = 100;
/** Dead letters listed on the poller page; Replay all pages through the rest. */
const PAGE_DEAD_LETTERS = 50;

/** What the dashboard shows of a poller's config besides the template: no secret in it. */
function factsOf(entry: PollerEntry): PollerFacts {
  if (entry.ok) {
    const { cron, enabled, alert_after } = entry.config;
    return { cron: cron ?? null, enabled, alertAfterMs: alert_after };
  }
  return { cron: entry.cron ?? null, enabled: entry.enabled, alertAfterMs: null };
}

function pollers(env: Env) {
  return loadPollers(env as unknown as Record<string, unknown>);
}

/** Every poller in POLLERS with its status, recent runs and facts, for the overview. */
export async function overviewData(
  env: Env,
): Promise<{ errors: string[]; pollers: OverviewPoller[] }> {
  const loaded = pollers(env);
  const rows = await Promise.all(
    loaded.pollers.map(async (entry) => {
      const object = pollerObject(env, entry.name);
      const status = await object.status(entry.name);
      const runs = (await object.runs(OVERVIEW_RUNS)).map(runView);
      return { status, runs, facts: factsOf(entry) };
    }),
  );
  return { errors: loaded.errors, pollers: rows };
}

/** One poller's page, or null when it is not in POLLERS. Dead letters only for an admin. */
export async function pollerPageData(
  env: Env,
  name: string,
  admin: boolean,
): Promise<PollerPage | null> {
  const entry = pollers(env).pollers.find((candidate) => candidate.name === name);
  if (!entry) return null;
  const object = pollerObject(env, name);
  const status = await object.status(name);
  const runs = (await object.runs(PAGE_RUNS)).map(runView);
  const deadLetters: DeadLetterPage = admin
    ? await object.deadLetters(name, PAGE_DEAD_LETTERS)
    : 'admin only';
  return { status, runs, facts: factsOf(entry), deadLetters, config: configTemplate(env, name) };
}
