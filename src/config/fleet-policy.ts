import * as z from 'zod';
import { SECRET_NAME } from '../secrets/names.ts';
import { duration, size } from './fields.ts';
import { hostEntryProblem } from './fleet-hosts.ts';

/**
 * FLEET_POLICY: what a runtime poller's config (PUT /pollers/:name, often customer input) may
 * reach. The deployer writes it in wrangler.toml (`[vars.FLEET_POLICY]`, or the same as a JSON
 * string); static pollers are the deployer's own and never checked against it.
 */

/**
 * The Worker's own credentials: a runtime config never uses them (a `${ADMIN_TOKEN}` sent
 * through the `SELF` binding would drive the admin API), and no policy can allow it.
 */
export const NEVER_REACHABLE: ReadonlySet<string> = new Set([
  'ADMIN_TOKEN',
  'STATUS_TOKEN',
  'SECRETS_KEY',
  'SECRETS_KEY_PREVIOUS',
]);

/** The default `max_config_bytes`: a config is a few hundred bytes; 32 KB is generous. */
const DEFAULT_MAX_CONFIG_BYTES = 32 * 1024;
/** A runtime config is one registry row: Durable Object SQLite caps a value at 2 MB. */
const MAX_MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The caps' defaults are the keys' own defaults (source.max_body, max_subrequests,
 * source.timeout and deliver.timeout): without a FLEET_POLICY that says more, a runtime
 * config may lower them, never raise them. A tenant's "8GB" body would be read whole into
 * the Worker's memory (128 MB), a larger budget or timeout holds its object longer.
 */
const DEFAULT_MAX_BODY = 16 * 1024 * 1024;
const DEFAULT_MAX_SUBREQUESTS = 1000;
const DEFAULT_MAX_TIMEOUT = 30_000;

const names = (what: string) =>
  z.array(z.string().regex(SECRET_NAME, `must be ${what} names (letters, digits and _)`));

const policySchema = z.strictObject({
  /** Worker vars and secrets a runtime config may use as `${NAME}` (default none). */
  env: names('var or secret')
    .refine((listed) => listed.every((name) => !NEVER_REACHABLE.has(name)), {
      error: (issue) =>
        `can never list ${neverListed(issue.input)}: it is the Worker's own credential, never a runtime poller's`,
    })
    .default([]),
  /** Service bindings (`source.service`) and queues (`deliver.binding`) it may name (default none). */
  bindings: names('binding').default([]),
  /** Handlers (`deliver.name` of handler and queue deliveries) it may deliver to (default none). */
  handlers: z.array(z.string().min(1)).default([]),
  /** Hosts of source.url and deliver.url: `api.example.com` or `*.example.com` (default any public host). */
  hosts: z
    .array(z.string())
    .superRefine((entries, ctx) => {
      for (const [index, entry] of entries.entries()) {
        const problem = hostEntryProblem(entry);
        if (problem !== undefined)
          ctx.addIssue({ code: 'custom', path: [index], message: problem });
      }
    })
    .optional(),
  /** http:// URLs, whose headers travel in clear (default false: local development only). */
  allow_http: z.boolean().default(false),
  /** The largest PUT /pollers/:name body, in bytes; a larger one is a 413 (default 32768). */
  max_config_bytes: z.int().min(1).max(MAX_MAX_CONFIG_BYTES).default(DEFAULT_MAX_CONFIG_BYTES),
  /** The largest source.max_body a runtime config may set (default "16MB", the key's default). */
  max_body: size.default(DEFAULT_MAX_BODY),
  /** The largest max_subrequests a runtime config may set (default 1000, the key's default). */
  max_subrequests: z.int().min(2).default(DEFAULT_MAX_SUBREQUESTS),
  /** The longest source.timeout and deliver.timeout a runtime config may set (default "30s"). */
  max_timeout: duration.default(DEFAULT_MAX_TIMEOUT),
});

export type FleetPolicy = z.output<typeof policySchema>;

/** With no FLEET_POLICY: a runtime poller's own secrets only, no bindings or handlers, https. */
export const DEFAULT_FLEET_POLICY: FleetPolicy = policySchema.parse({});

/**
 * FLEET_POLICY as the Worker was given it: a table from wrangler.toml, the same as a JSON
 * string, or nothing (the default). An invalid one is an error, never a looser policy.
 */
export function readFleetPolicy(
  value: unknown,
): { ok: true; policy: FleetPolicy } | { ok: false; error: string } {
  if (value === undefined) return { ok: true, policy: DEFAULT_FLEET_POLICY };
  let raw = value;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      return { ok: false, error: 'FLEET_POLICY is invalid: it is a string but not JSON' };
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      ok: false,
      error: 'FLEET_POLICY is invalid: it must be a table ([vars.FLEET_POLICY])',
    };
  }
  const parsed = policySchema.safeParse(raw);
  if (parsed.success) return { ok: true, policy: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const at = issue.path.reduce<string>(
      (path, key) => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${String(key)}`),
      'FLEET_POLICY',
    );
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${at}.${key}: unknown key`).join('; ');
    }
    return `${at}: ${issue.message}`;
  });
  return { ok: false, error: `FLEET_POLICY is invalid: ${problems.join('; ')}` };
}

/** The never-reachable names an `env` list holds, for its error. */
function neverListed(input: unknown): string {
  const listed = Array.isArray(input) ? input : [];
  return listed.filter((name) => NEVER_REACHABLE.has(String(name))).join(', ');
}
