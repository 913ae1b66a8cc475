import type { CountedGroup } from './cap-groups.ts';

/**
 * The registry's row types and their mappers: one row per poller (static or runtime), read by
 * lists, /metrics, /healthz and the watchdog without waking a poller.
 */

/** static: declared in wrangler.toml; runtime: created with PUT /pollers/:name. */
export type PollerKind = 'static' | 'runtime';

/**
 * active: runs; configuring: its config is on its way to its object (or a crash left it
 * half-way: the watchdog finishes it); deleting: being erased (likewise).
 */
export type Phase = 'active' | 'configuring' | 'deleting';

/** What a poller tells the registry about itself, when it changes and at each heartbeat. */
export interface PollerSummary {
  state: string;
  checkpoint: number | null;
  deadLetters: number;
  /** /healthz counts it as at fault (its status has alerts). */
  atFault: boolean;
  /** Why, when at fault: its first alert, short (alerts never hold a secret). */
  reason: string | null;
  /**
   * When the registry should hear from it again (poller/due-at.ts); null when nothing wakes
   * it by itself (paused, disabled, misconfigured), and then it is never overdue.
   */
  dueAt: number | null;
}

/**
 * A poller as lists show it: never its config, which may be large (a page of a dozen 3 MB
 * configs would pass the 32 MiB an RPC value may hold, and fail the whole list).
 */
export interface RegistryEntry {
  name: string;
  kind: PollerKind;
  phase: Phase;
  version: number;
  /** Runtime pollers: which life of the name this is (never repeats; 0 for static pollers). */
  incarnation: number;
  labels: Record<string, string>;
  state: string | null;
  checkpoint: number | null;
  deadLetters: number;
  reportedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** One poller's whole row, its config with it: read one poller at a time. */
export interface RegistryRecord extends RegistryEntry {
  /** Runtime pollers: the config as written (`${NAME}` unresolved), as JSON text. */
  config: string | null;
}

/** One group of the fleet: its state, kind and label values, and how many pollers it has. */
export type FleetGroup = CountedGroup;

/** A runtime poller at fault, and why (as it last reported). */
export interface FaultEntry {
  name: string;
  reason: string | null;
}

/** What /healthz needs of the registry, in one call: the fleet's counts, and who is at fault. */
export interface FleetHealth {
  groups: FleetGroup[];
  /** The first runtime pollers at fault by name, with their reasons. */
  faults: FaultEntry[];
}

export interface ListQuery {
  limit: number;
  cursor?: string | undefined;
  /** `key=value`: only pollers with this label. */
  label?: { key: string; value: string } | undefined;
  state?: string | undefined;
  /** Part of the name. */
  search?: string | undefined;
}

/** A runtime poller's config as issued: the text, its version and its incarnation. */
export interface IssuedConfig {
  config: string;
  version: number;
  incarnation: number;
}

/** What the watchdog needs of a poller to visit it: never its config (fetched if needed). */
export type WatchdogEntry = {
  name: string;
  phase: string;
  version: number;
  incarnation: number;
};
export const WATCHDOG_COLUMNS = 'name, phase, version, incarnation';
/** What a list shows: every column but the config. */
export const LIST_COLUMNS =
  'name, kind, phase, version, incarnation, labels, state, checkpoint, dead_letters, reported_at, created_at, updated_at';

export type ListRow = {
  name: string;
  kind: string;
  phase: string;
  version: number;
  incarnation: number;
  labels: string;
  state: string | null;
  checkpoint: number | null;
  dead_letters: number;
  reported_at: number | null;
  created_at: number;
  updated_at: number;
};
export type Row = ListRow & { config: string | null };

/** A list row as the API and the dashboard see it (its JSON labels parsed). */
export function entryOf(row: ListRow): RegistryEntry {
  return {
    name: row.name,
    kind: row.kind === 'static' ? 'static' : 'runtime',
    phase:
      row.phase === 'deleting'
        ? 'deleting'
        : row.phase === 'configuring'
          ? 'configuring'
          : 'active',
    version: row.version,
    incarnation: row.incarnation,
    labels: JSON.parse(row.labels) as Record<string, string>,
    state: row.state,
    checkpoint: row.checkpoint,
    deadLetters: row.dead_letters,
    reportedAt: row.reported_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
