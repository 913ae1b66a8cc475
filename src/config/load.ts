import type * as z from 'zod';
import { asTemplate, interpolate, type Reference } from './interpolate.ts';
import { type PollerConfig, pollerSchema } from './schema.ts';

/** A poller name becomes a Durable Object name, a URL segment and part of idempotency keys. */
const POLLER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

export type PollerEntry =
  | {
      name: string;
      ok: true;
      config: PollerConfig;
      secrets: string[];
      /** Each `${NAME}` used, with its value, to show URLs and errors as their template. */
      references: Reference[];
      /** The config as written, before interpolation. */
      raw: unknown;
    }
  | { name: string; ok: false; errors: string[]; cron?: string; enabled: boolean };

export interface LoadedPollers {
  pollers: PollerEntry[];
  /** Problems with POLLERS as a whole (not set, not JSON). */
  errors: string[];
}

export interface LoadOptions {
  /** The crons in [triggers].crons, when known (at build and deploy time; not at run time). */
  crons?: readonly string[];
}

/**
 * Parses and validates `POLLERS` (an object from wrangler.toml, or the same as a JSON
 * string). Each poller is validated on its own so that a bad one never stops the others.
 */
export function loadPollers(
  env: Record<string, unknown>,
  options: LoadOptions = {},
): LoadedPollers {
  const table = readPollersTable(env.POLLERS);
  if (!table.ok) return { pollers: [], errors: [table.error] };
  const pollers = Object.entries(table.pollers).map(([name, value]) =>
    loadPoller(name, value, env, options),
  );
  return { pollers, errors: [] };
}

/** POLLERS as a table of raw poller configs: wrangler gives an object, `--var` a JSON string. */
export function readPollersTable(
  value: unknown,
): { ok: true; pollers: Record<string, unknown> } | { ok: false; error: string } {
  let raw = value;
  if (raw === undefined) {
    return { ok: false, error: 'POLLERS is not set: declare pollers under [vars.POLLERS.<name>]' };
  }
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch (error) {
      return { ok: false, error: `POLLERS is a string but not JSON: ${String(error)}` };
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, error: 'POLLERS must be a table of pollers: [vars.POLLERS.<name>]' };
  }
  return { ok: true, pollers: raw as Record<string, unknown> };
}

/** Validates one poller; every error names the poller and the key. */
export function loadPoller(
  name: string,
  raw: unknown,
  env: Record<string, unknown>,
  options: LoadOptions = {},
): PollerEntry {
  const prefix = (path: string) => `poller "${name}": ${path}`;
  const hint = shallowHint(raw);
  if (!POLLER_NAME.test(name)) {
    return {
      name,
      ok: false,
      ...hint,
      errors: [
        prefix('name must be 1-63 letters, digits, "_" or "-", starting with a letter or digit'),
      ],
    };
  }
  const interpolated = interpolate(raw, env);
  const parsed = pollerSchema.safeParse(interpolated.value);
  const errors = interpolated.errors.map(prefix);
  // Messages echo what they were given: shown as written (`${NAME}`), never the secret value.
  if (!parsed.success) {
    errors.push(
      ...parsed.error.issues.map((issue) =>
        prefix(asTemplate(describe(issue), interpolated.references)),
      ),
    );
  }
  if (parsed.success) {
    const config = parsed.data;
    if (options.crons && !options.crons.includes(config.cron)) {
      errors.push(
        prefix(
          asTemplate(
            `cron: "${config.cron}" is not listed in [triggers].crons (${JSON.stringify(options.crons)}), so it would never fire`,
            interpolated.references,
          ),
        ),
      );
    }
    if (errors.length === 0) {
      const { secrets, references } = interpolated;
      return { name, ok: true, config, secrets, references, raw };
    }
  }
  return { name, ok: false, errors, ...hint };
}

function describe(issue: z.core.$ZodIssue): string {
  const path = issue.path.join('.') || '(poller)';
  if (issue.code === 'unrecognized_keys') {
    return issue.keys
      .map((key) => `${path === '(poller)' ? key : `${path}.${key}`}: unknown key`)
      .join('; ');
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) return `${path}: is required`;
  return `${path}: ${issue.message}`;
}

/** What status can still say about a poller whose config is invalid. */
function shallowHint(raw: unknown): { cron?: string; enabled: boolean } {
  if (raw === null || typeof raw !== 'object') return { enabled: true };
  const { cron, enabled } = raw as { cron?: unknown; enabled?: unknown };
  return {
    ...(typeof cron === 'string' ? { cron } : {}),
    enabled: enabled !== false,
  };
}
