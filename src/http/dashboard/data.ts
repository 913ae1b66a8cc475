import { findPoller, readSettings, staticConfig, staticPollers } from '../../catalog.ts';
import type { PollerEntry } from '../../config/load.ts';
import { overviewLists } from '../../fleet/lists.ts';
import { refreshSecretOf } from '../../poller/refresh-secret.ts';
import { runView } from '../../poller/status.ts';
import type { ListQuery, RegistryEntry } from '../../registry/registry.ts';
import { pollerObject } from '../known-poller.ts';
import { type ConfigAsWritten, configTemplate } from './config-view.ts';
import type { DeadLetterPage } from './dead-letter-list.ts';
import type { PollerFacts } from './explain.ts';
import type { FleetCount, OverviewPage, OverviewRow } from './panel.ts';
import type { PollerPage } from './poller-page.ts';

/** Runs in each overview chart; the poller page shows the whole history (100). */
const OVERVIEW_RUNS = 60;
const PAGE_RUNS = 100;
/** Dead letters listed on the poller page; Replay all pages through the rest. */
const PAGE_DEAD_LETTERS = 50;

/** What the dashboard shows of a poller's config besides the template: no secret in it. */
function factsOf(entry: PollerEntry, kind: PollerFacts['kind']): PollerFacts {
  if (entry.ok) {
    const { cron, every, enabled, alert_after } = entry.config;
    return {
      kind,
      cron: cron ?? null,
      everyMs: every ?? null,
      enabled,
      alertAfterMs: alert_after,
    };
  }
  return {
    kind,
    cron: entry.cron ?? null,
    everyMs: null,
    enabled: entry.enabled,
    alertAfterMs: null,
  };
}

/** The labels of a config as written: data, never interpolated, so as the poller has them. */
function labelsOf(raw: unknown): Record<string, string> {
  const labels = raw !== null && typeof raw === 'object' ? Reflect.get(raw, 'labels') : undefined;
  if (labels === null || typeof labels !== 'object') return {};
  return Object.fromEntries(
    Object.entries(labels).filter((pair): pair is [string, string] => typeof pair[1] === 'string'),
  );
}

/** One static poller's live status and recent runs: static pollers are few. */
async function staticRow(env: Env, entry: RegistryEntry, loaded: PollerEntry[]) {
  const declared = loaded.find((candidate) => candidate.name === entry.name);
  const object = pollerObject(env, entry.name);
  const [status, runs] = await Promise.all([object.status(), object.runs(OVERVIEW_RUNS)]);
  const facts: PollerFacts = declared
    ? factsOf(declared, 'static')
    : { kind: 'static', cron: null, everyMs: null, enabled: true, alertAfterMs: null };
  return { kind: 'static' as const, entry, status, runs: runs.map(runView), facts };
}

/**
 * One page of the overview, from the registry: the pollers that match, a page at a time in
 * name order, and the fleet counted by state and kind. Runtime pollers are shown as they
 * last reported themselves, without waking one; the static pollers on the page (a few dozen
 * at most, and the watchdog wakes them every minute anyway) are read live for a richer row.
 */
export async function overviewData(env: Env, query: ListQuery): Promise<OverviewPage> {
  const loaded = staticPollers(env);
  const { page, groups } = await overviewLists(env, query);
  const rows: OverviewRow[] = await Promise.all(
    page.items.map((entry) =>
      entry.kind === 'static'
        ? staticRow(env, entry, loaded.pollers)
        : { kind: 'runtime' as const, entry },
    ),
  );
  const counts: FleetCount[] = groups.map(({ state, kind, count }) => ({ state, kind, count }));
  return { errors: loaded.errors, rows, nextCursor: page.nextCursor, counts, limit: query.limit };
}

/** A static poller's page, or null when `name` is not in POLLERS. */
function staticSource(env: Env, name: string) {
  const entry = staticPollers(env).pollers.find((candidate) => candidate.name === name);
  const text = configTemplate(env, name);
  if (!entry || text === null) return null;
  const config: ConfigAsWritten = { kind: 'static', text, version: null };
  return {
    facts: factsOf(entry, 'static'),
    config,
    labels: entry.ok ? entry.config.labels : {},
    refreshSecret: refreshSecretOf(staticConfig(env, name), env),
  };
}

/** A runtime poller's config as written, from the registry, or null when there is none. */
async function runtimeSource(env: Env, name: string) {
  const entry = await findPoller(env, name);
  if (entry?.kind !== 'runtime') return null;
  const text = JSON.stringify(entry.raw, null, 2);
  const config: ConfigAsWritten = { kind: 'runtime', text, version: entry.version };
  // Read as the consumer reads it (catalog.readSettings): a secret not set yet is the
  // poller's status's to report, not a reason to hide its schedule.
  const facts = factsOf(readSettings(env, entry), 'runtime');
  const refreshSecret = refreshSecretOf(entry.raw, null);
  return { facts, config, labels: labelsOf(entry.raw), refreshSecret };
}

/**
 * One poller's page, static or runtime, or null when there is no such poller. Dead letters
 * only for an admin.
 */
export async function pollerPageData(
  env: Env,
  name: string,
  admin: boolean,
): Promise<PollerPage | null> {
  const source = staticSource(env, name) ?? (await runtimeSource(env, name));
  if (source === null) return null;
  const object = pollerObject(env, name);
  const [status, runs, deadLetters] = await Promise.all([
    object.status(),
    object.runs(PAGE_RUNS),
    admin ? object.deadLetters(PAGE_DEAD_LETTERS) : Promise.resolve<DeadLetterPage>('admin only'),
  ]);
  return { status, runs: runs.map(runView), deadLetters, ...source };
}
