// Checked reading of stored kinds and JSON: owns no table.
import type { FailureKind } from '../../engine/backoff.ts';
import type { Lease } from '../../engine/lease.ts';
import type { DeadLetter, RunOutcome, TriggerKind, Wakeup } from '../../engine/ports.ts';

/**
 * Checked reading of stored values: owns no table. A row's text column holding a kind (a
 * trigger, an outcome) or JSON (the idle run, the registry report) is checked against what
 * the store writes there, instead of trusted with a cast: a value changed behind the store's
 * back is an error that names its column, not a wrong state passed on to the engine.
 */

/** A stored value the store never writes there. */
export class StoredValueError extends Error {
  override name = 'StoredValueError';
  constructor(column: string, value: unknown) {
    super(
      `${column}: ${JSON.stringify(value) ?? String(value)} is not a value tidemark stores there`,
    );
  }
}

/** Every value of a kind, once: `satisfies` makes the compiler see one missing or unknown. */
type KnownSet<K extends string> = Readonly<Record<K, true>>;

export const TRIGGER_KINDS = {
  cron: true,
  manual: true,
  retry: true,
  continuation: true,
  recovery: true,
  replay: true,
  preview: true,
  nudge: true,
  startup: true,
} as const satisfies KnownSet<TriggerKind>;

export const RUN_OUTCOMES = {
  success: true,
  partial: true,
  failed: true,
  skipped: true,
  recovered: true,
  fenced: true,
  continued: true,
} as const satisfies KnownSet<RunOutcome>;

export const LEASE_PHASES = { acquired: true, running: true } as const satisfies KnownSet<
  Lease['phase']
>;

export const WAKEUP_REASONS = { retry: true, continuation: true } as const satisfies KnownSet<
  Wakeup['reason']
>;

export const FAILURE_KINDS = {
  transient: true,
  rate_limited: true,
  misconfigured: true,
} as const satisfies KnownSet<FailureKind>;

export const DEAD_LETTER_KINDS = { delivery: true, unreadable: true } as const satisfies KnownSet<
  DeadLetter['kind']
>;

function isIn<K extends string>(set: KnownSet<K>, value: unknown): value is K {
  return typeof value === 'string' && Object.hasOwn(set, value);
}

/** `value` as one of a kind's values; `column` names it when it is not one. */
export function known<K extends string>(set: KnownSet<K>, value: unknown, column: string): K {
  if (isIn(set, value)) return value;
  throw new StoredValueError(column, value);
}

/** Parsed JSON text that must be an object (not an array, not null). */
export function jsonObject(text: string, column: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  if (!isRecord(value)) throw new StoredValueError(column, value);
  return value;
}

/** A nested object of a stored JSON value, checked. */
export function jsonFields(value: unknown, column: string): Record<string, unknown> {
  if (!isRecord(value)) throw new StoredValueError(column, value);
  return value;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function numberAt(value: unknown, column: string): number {
  if (typeof value === 'number') return value;
  throw new StoredValueError(column, value);
}

export function numberOrNull(value: unknown, column: string): number | null {
  return value === null ? null : numberAt(value, column);
}

export function stringAt(value: unknown, column: string): string {
  if (typeof value === 'string') return value;
  throw new StoredValueError(column, value);
}

export function stringOrNull(value: unknown, column: string): string | null {
  return value === null ? null : stringAt(value, column);
}

export function booleanAt(value: unknown, column: string): boolean {
  if (typeof value === 'boolean') return value;
  throw new StoredValueError(column, value);
}
