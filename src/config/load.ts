import type * as z from 'zod';
import { describeIssue } from './describe-issue.ts';
import { asTemplate, type InterpolateOptions, interpolate, type Reference } from './interpolate.ts';
import { pollerNameProblem } from './poller-name.ts';
import { type PollerConfig, pollerSchema } from './schema.ts';

export { RESERVED_NAMES } from './poller-name.ts';

/** How a config is read beyond its schema: who may use which `${NAME}`, and what else to check. */
export interface LoadOptions extends InterpolateOptions {
  /** Problems of a config that fits the schema (a runtime poller's FLEET_POLICY), each naming its key. */
  check?: (config: PollerConfig) => string[];
}

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

/**
 * Parses and validates `POLLERS` (an object from wrangler.toml, or the same as a JSON
 * string). Each poller is validated on its own so that a bad one never stops the others.
 */
export function loadPollers(env: Record<string, unknown>): LoadedPollers {
  const table = readPollersTable(env.POLLERS);
  if (!table.ok) return { pollers: [], errors: [table.error] };
  const pollers = Object.entries(table.pollers).map(([name, value]) =>
    loadPoller(name, value, env),
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
  const nameProblem = pollerNameProblem(name);
  if (nameProblem !== null) return { name, ok: false, ...hint, errors: [prefix(nameProblem)] };
  const interpolated = interpolate(raw, env, options);
  const parsed = pollerSchema.safeParse(interpolated.value);
  const errors = interpolated.errors.map(prefix);
  const { references } = interpolated;
  // Messages echo what they were given: shown as written (`${NAME}`), never the secret value.
  if (parsed.success && options.check) {
    errors.push(
      ...options.check(parsed.data).map((problem) => prefix(asTemplate(problem, references))),
    );
  }
  if (!parsed.success) {
    errors.push(
      ...allIssues(interpolated.value).map((issue) =>
        prefix(asTemplate(describeIssue(issue, pollerSchema, references), references)),
      ),
    );
  }
  if (parsed.success && errors.length === 0) {
    const { secrets } = interpolated;
    return { name, ok: true, config: parsed.data, secrets, references, raw };
  }
  return { name, ok: false, errors, ...hint };
}

/** Passes after the first: each sets aside what was reported so the checks behind it can run. */
const MAX_PASSES = 5;

/**
 * Every issue of a poller in one go. Zod skips the cross-key checks (lease_ttl against
 * max_run, …) while any key has the wrong type, so each pass drops the keys already reported
 * (a default takes their place) and parses again, keeping only issues at keys not yet named.
 */
function allIssues(value: unknown): z.core.$ZodIssue[] {
  const reported: z.core.$ZodIssue[] = [];
  let current = value;
  for (let pass = 0; pass <= MAX_PASSES; pass += 1) {
    const result = pollerSchema.safeParse(current, { reportInput: true });
    if (result.success) break;
    const fresh = result.error.issues.filter(
      (issue) => !reported.some((seen) => covers(seen, issue)),
    );
    if (fresh.length === 0) break;
    reported.push(...fresh);
    current = without(current, fresh);
  }
  return reported;
}

/** The keys an issue names: its path, or each unknown key. */
function spots(issue: z.core.$ZodIssue): string[] {
  const at = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => [...at, key].join('.'));
  return [at.join('.')];
}

/** Whether `issue` is about a key `seen` already named (or something inside it). */
function covers(seen: z.core.$ZodIssue, issue: z.core.$ZodIssue): boolean {
  return spots(issue).every((spot) =>
    spots(seen).some((named) => named === '' || spot === named || spot.startsWith(`${named}.`)),
  );
}

/** A copy of `value` without the keys the issues name. */
function without(value: unknown, issues: z.core.$ZodIssue[]): unknown {
  const copy = structuredClone(value);
  for (const issue of issues) {
    const unknownKeys = issue.code === 'unrecognized_keys';
    const keys = unknownKeys ? issue.keys : issue.path.slice(-1);
    const parent = (unknownKeys ? issue.path : issue.path.slice(0, -1)).reduce<unknown>(
      (node, key) =>
        node !== null && typeof node === 'object'
          ? (node as Record<PropertyKey, unknown>)[key]
          : undefined,
      copy,
    );
    if (parent === null || typeof parent !== 'object') continue;
    for (const key of keys) delete (parent as Record<PropertyKey, unknown>)[key];
  }
  return copy;
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
