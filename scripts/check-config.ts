/**
 * Validates the POLLERS of wrangler.toml (or `--env <name>`) before `npm start` and
 * `npm run deploy`, including what the Worker cannot see at run time: that each poller's
 * cron is listed in [triggers].crons. Secrets are not known here, so `${NAME}` only has to
 * name something; their values are checked by the Worker itself.
 */
import { unstable_readConfig } from 'wrangler';
import { loadPollers } from '../src/config/load.ts';

export interface CheckResult {
  pollers: string[];
  errors: string[];
  crons: string[];
}

export function checkConfig(
  options: { environment?: string; secrets?: Record<string, string> } = {},
): CheckResult {
  const config = unstable_readConfig({ config: 'wrangler.toml', env: options.environment });
  const crons = config.triggers.crons ?? [];
  const vars = config.vars as Record<string, unknown>;
  // Any ${NAME} resolves unless real secrets were given (npm start passes .dev.vars).
  const env = new Proxy({ ...vars, ...options.secrets } as Record<string, unknown>, {
    get: (target, name) =>
      typeof name === 'string' && !(name in target) && !options.secrets
        ? 'secret-set-at-deploy'
        : target[name as string],
  });
  const loaded = loadPollers(env, { crons });
  const errors = [
    ...loaded.errors,
    ...loaded.pollers.flatMap((entry) => (entry.ok ? [] : entry.errors)),
  ];
  return { pollers: loaded.pollers.map((entry) => entry.name), errors, crons };
}

if (import.meta.main) {
  const envFlag = process.argv.indexOf('--env');
  const environment = envFlag >= 0 ? process.argv[envFlag + 1] : undefined;
  const result = checkConfig(environment === undefined ? {} : { environment });
  if (result.errors.length > 0) {
    console.error(`POLLERS has ${result.errors.length} error(s):`);
    for (const error of result.errors) console.error(`  - ${error}`);
    process.exit(1);
  }
  console.log(
    `POLLERS ok: ${result.pollers.join(', ') || '(none)'}; crons ${JSON.stringify(result.crons)}`,
  );
}
