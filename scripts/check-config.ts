/**
 * `npm run check-config [-- --env <name>] [--config <path>]`: validates the POLLERS of
 * wrangler.toml (or of one environment), run by `npm start` and `npm run deploy` too. It checks
 * what the Worker cannot see at run time: that the environment exists, and that the demo's
 * placeholder D1 id is not about to be deployed; and it lists the `${SECRET}`s the Worker
 * needs and which are unset.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { unstable_readConfig } from 'wrangler';
import { readFleetFolder } from '../src/cli/fleet-folder.ts';
import { readFleetPolicy } from '../src/config/fleet-policy.ts';
import { referencedNames } from '../src/config/interpolate.ts';
import { loadPoller, loadPollers, type PollerEntry, readPollersTable } from '../src/config/load.ts';
import { privateUrls } from '../src/config/private-urls.ts';
import { type AuthType, authKinds } from '../src/sources/auth/index.ts';
import { nextPathWarnings } from '../src/sources/paging/index.ts';
import { parseDevVars } from './dev-vars.ts';

export interface CheckOptions {
  /** The wrangler config file (default wrangler.toml). */
  configPath?: string;
  /** A wrangler environment ([env.<name>]); the top level when not given. */
  environment?: string;
  /** Secret values known here (.dev.vars): `${NAME}` takes them. */
  secrets?: Record<string, string>;
  /** A `${NAME}` without a value in `secrets` is an error (npm start), not a secret set elsewhere. */
  strict?: boolean;
  /** Checking for a deploy: the placeholder D1 id is an error instead of a warning. */
  deploy?: boolean;
  /**
   * Checking what will run on Cloudflare (a deploy, or `--env <name>`): a poller URL on this
   * machine or a private network, which a deployed Worker cannot reach, is warned of.
   */
  remote?: boolean;
  /** POLLERS as they will run instead of the file's (npm start's DEMO_OAUTH variant). */
  pollers?: unknown;
}

/** A secret the Worker reads: who needs it, and whether it may be left unset. */
export interface SecretNeed {
  name: string;
  usedBy: string[];
  optional: boolean;
}

export interface CheckResult {
  pollers: string[];
  /** The pollers whose config is valid, as loaded. */
  valid: Extract<PollerEntry, { ok: true }>[];
  errors: string[];
  warnings: string[];
  crons: string[];
  secrets: SecretNeed[];
}

/** The D1 id the committed wrangler.toml carries for the demo: fine locally, not on Cloudflare. */
const PLACEHOLDER_ID = /^0{8}-0{4}-0{4}-0{4}-0{12}$/;

/** Validates one environment of a wrangler config. Never throws: problems come back as lines. */
export function checkConfig(options: CheckOptions = {}): CheckResult {
  const configPath = options.configPath ?? 'wrangler.toml';
  const result: CheckResult = {
    pollers: [],
    valid: [],
    errors: [],
    warnings: [],
    crons: [],
    secrets: [],
  };
  let config: ReturnType<typeof unstable_readConfig>;
  try {
    config = unstable_readConfig({ config: configPath, env: options.environment });
  } catch (error) {
    result.errors.push(readError(configPath, error));
    return result;
  }
  const where = options.environment ? `[env.${options.environment}]` : 'the top level';
  if (options.environment && !config.definedEnvironments?.includes(options.environment)) {
    result.errors.push(
      `${configPath} has no [env.${options.environment}]: wrangler would fall back to the top level's settings`,
    );
  }
  result.crons = config.triggers.crons ?? [];
  const vars = (
    options.pollers === undefined ? config.vars : { ...config.vars, POLLERS: options.pollers }
  ) as Record<string, unknown>;
  const known = { ...vars, ...options.secrets } as Record<string, unknown>;
  // A ${NAME} with no value here is a secret set elsewhere (wrangler secret put): any text will
  // do to check the rest, unless the caller knows every secret (npm start and .dev.vars).
  const env = new Proxy(known, {
    get: (target, name) =>
      typeof name === 'string' && !(name in target) && !options.strict
        ? 'secret-set-elsewhere'
        : target[name as string],
  });
  // Pollers schedule themselves; the one cron the Worker needs is its watchdog's.
  if (result.crons.length === 0) {
    result.errors.push(
      `${where}: [triggers].crons is empty: add one cron (e.g. "* * * * *") for the watchdog that repairs lost alarms and finishes interrupted creates and deletes`,
    );
  }
  const loaded = loadPollers(env);
  result.pollers = loaded.pollers.map((entry) => entry.name);
  result.valid = loaded.pollers.filter((entry) => entry.ok);
  result.errors.push(
    ...loaded.errors.map((error) => `${where}: ${error}`),
    ...loaded.pollers.flatMap((entry) => (entry.ok ? [] : entry.errors)),
  );
  // A next-page path that can never be found reads every page as its window's last.
  for (const entry of result.valid) {
    for (const warning of nextPathWarnings(entry.config.source)) {
      result.warnings.push(`poller "${entry.name}": ${warning}`);
    }
  }
  if (options.remote) {
    for (const entry of result.valid) {
      for (const { key, url } of privateUrls(entry.name, entry.config)) {
        result.warnings.push(
          `poller "${entry.name}": ${key} (${new URL(url).host}) is a loopback or private address: a deployed Worker cannot reach it (it answers only under npm start)`,
        );
      }
    }
  }
  result.secrets = secretsNeeded(vars);
  // A FLEET_POLICY the Worker would refuse fails every runtime poller (closed): said now.
  if (vars.FLEET_POLICY !== undefined) {
    const policy = readFleetPolicy(vars.FLEET_POLICY);
    if (!policy.ok) result.errors.push(`${where}: ${policy.error}`);
  }
  for (const db of config.d1_databases) {
    if (!PLACEHOLDER_ID.test(db.database_id ?? '')) continue;
    const message =
      `d1_databases: ${db.binding} ("${db.database_name}") has the placeholder database_id ${db.database_id}: ` +
      `a deploy would fail. Create it with \`wrangler d1 create ${db.database_name}\` and put its id in ${configPath}, ` +
      'or remove the demo poller and its bindings (docs/deploying.md)';
    (options.deploy ? result.errors : result.warnings).push(message);
  }
  return result;
}

/**
 * Validates a folder of poller files (NAME.toml or NAME.json, each the body of a
 * `PUT /pollers/NAME`: the form `tidemark apply` and `tidemark preview` read), offline. A
 * `${NAME}` is a secret set elsewhere. What only the Worker knows (its FLEET_POLICY) is
 * checked by the PUT itself.
 */
export function checkPollerFiles(
  dir: string,
): Pick<CheckResult, 'pollers' | 'errors' | 'warnings'> {
  const files = readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .map((name) => ({ name, text: readFileSync(`${dir}/${name}`, 'utf8') }));
  const folder = readFleetFolder(dir, files);
  if (!folder.ok) return { pollers: [], errors: folder.errors, warnings: [] };
  const anySecret = new Proxy({}, { get: () => 'secret-set-elsewhere', has: () => true });
  const result = { pollers: [] as string[], errors: [] as string[], warnings: [] as string[] };
  for (const { name, file, config } of folder.pollers) {
    result.pollers.push(name);
    const entry = loadPoller(name, config, anySecret);
    if (!entry.ok) {
      result.errors.push(...entry.errors.map((error) => `${file}: ${error}`));
      continue;
    }
    for (const warning of nextPathWarnings(entry.config.source)) {
      result.warnings.push(`${file}: ${warning}`);
    }
  }
  return result;
}

/** One line for a config file wrangler cannot read: where, and why. */
function readError(configPath: string, error: unknown): string {
  const { message, location } = error as {
    message?: string;
    location?: { line?: number; column?: number };
  };
  const text = String(message ?? error).split('\n')[0] ?? '';
  if (location?.line !== undefined) {
    const at = `${configPath}:${location.line}${location.column === undefined ? '' : `:${location.column}`}`;
    return `${at}: ${text.replace(/^Invalid TOML document: /, 'TOML syntax error: ')}`;
  }
  return `${configPath}: ${text}`;
}

/**
 * The secrets the Worker reads: every `${NAME}` in POLLERS that is not a var, with the pollers
 * that use it, and the API tokens.
 */
function secretsNeeded(vars: Record<string, unknown>): SecretNeed[] {
  const needs = new Map<string, SecretNeed>();
  const need = (name: string, usedBy: string, optional = false) => {
    const entry = needs.get(name) ?? { name, usedBy: [], optional };
    if (!entry.usedBy.includes(usedBy)) entry.usedBy.push(usedBy);
    entry.optional &&= optional;
    needs.set(name, entry);
  };
  need('ADMIN_TOKEN', 'the admin API and the dashboard');
  need('STATUS_TOKEN', 'read-only API access (ADMIN_TOKEN reads too)', true);
  need('SECRETS_KEY', 'per-poller secrets stored through the API', true);
  const table = readPollersTable(vars.POLLERS);
  for (const [poller, raw] of table.ok ? Object.entries(table.pollers) : []) {
    for (const name of referencedNames(raw)) {
      if (!(name in vars)) need(name, `poller ${poller}`);
    }
    // A kind that renews a token (oauth2, jwt_bearer) keeps it sealed under SECRETS_KEY:
    // without it the poller cannot run.
    const type = (raw as { source?: { auth?: { type?: unknown } } } | null)?.source?.auth?.type;
    if (typeof type === 'string' && Object.hasOwn(authKinds, type)) {
      if (authKinds[type as AuthType].renews) {
        need('SECRETS_KEY', `poller ${poller} (source.auth = ${type})`);
      }
    }
  }
  return [...needs.values()];
}

/** The local secrets `wrangler dev --env <name>` reads: .dev.vars.<name>, else .dev.vars. */
export function localSecretsFile(environment: string | undefined): string {
  const specific = environment ? `.dev.vars.${environment}` : undefined;
  return specific && existsSync(specific) ? specific : '.dev.vars';
}

/** `--name value` or `--name=value` (or a short alias) from argv. */
export function flag(argv: readonly string[], names: readonly string[]): string | undefined {
  for (const [index, arg] of argv.entries()) {
    if (names.includes(arg)) return argv[index + 1];
    const name = names.find((candidate) => arg.startsWith(`${candidate}=`));
    if (name) return arg.slice(name.length + 1);
  }
  return undefined;
}

/** `wrangler secret put NAME` for the environment checked. */
export function putCommand(name: string, environment: string | undefined): string {
  return `wrangler secret put ${name}${environment ? ` --env ${environment}` : ''}`;
}

/** Prints a check's errors and warnings; true when there are no errors. */
export function report(result: CheckResult, label: string): boolean {
  for (const warning of result.warnings) console.warn(`warning: ${warning}`);
  if (result.errors.length > 0) {
    console.error(`${label}: ${result.errors.length} error(s):`);
    for (const error of result.errors) console.error(`  - ${error}`);
    return false;
  }
  console.log(
    `${label}: POLLERS ok: ${result.pollers.join(', ') || '(none)'}; crons ${JSON.stringify(result.crons)}`,
  );
  return true;
}

/** The secrets table: name, who uses it, and a status from `status(name)`. */
export function printSecrets(secrets: SecretNeed[], status: (name: string) => string): void {
  const width = Math.max(...secrets.map((secret) => secret.name.length));
  for (const secret of secrets) {
    const use = `${secret.usedBy.join(', ')}${secret.optional ? ' (optional)' : ''}`;
    console.log(`  ${secret.name.padEnd(width)}  ${status(secret.name).padEnd(22)}  ${use}`);
  }
}

function main(argv: readonly string[]): number {
  const folder = flag(argv, ['--pollers']);
  if (folder !== undefined) {
    const checked = checkPollerFiles(folder);
    for (const warning of checked.warnings) console.warn(`warning: ${warning}`);
    for (const error of checked.errors) console.error(`  - ${error}`);
    if (checked.errors.length === 0) console.log(`${folder}: ok: ${checked.pollers.join(', ')}`);
    return checked.errors.length === 0 ? 0 : 1;
  }
  const environment = flag(argv, ['--env', '-e']);
  const configPath = flag(argv, ['--config', '-c']);
  const file = localSecretsFile(environment);
  const local = existsSync(file) ? parseDevVars(readFileSync(file, 'utf8')) : {};
  const result = checkConfig({
    ...(environment === undefined ? {} : { environment }),
    ...(configPath === undefined ? {} : { configPath }),
    secrets: local,
    remote: environment !== undefined,
  });
  const label = `${configPath ?? 'wrangler.toml'}${environment ? ` [env.${environment}]` : ''}`;
  const ok = report(result, label);
  if (result.secrets.length > 0) {
    console.log(
      `secrets (deployed: \`${putCommand('NAME', environment)}\`; locally: ${file}, which npm start creates):`,
    );
    printSecrets(result.secrets, (name) => (local[name] ? `set in ${file}` : `NOT SET in ${file}`));
  }
  return ok ? 0 : 1;
}

if (import.meta.main) process.exit(main(process.argv.slice(2)));
