/**
 * `npm run deploy [-- --env <name>] [wrangler deploy flags]`: checks the environment that is
 * about to be deployed (POLLERS, crons, the placeholder D1 id, the secrets the deployed Worker
 * lacks), and only then runs `wrangler deploy` with the same flags.
 */
import { spawnSync } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { checkConfig, flag, printSecrets, putCommand, report } from './check-config.ts';

/** Runs wrangler with these arguments; `capture` returns its output instead of showing it. */
export type Wrangler = (
  args: string[],
  capture: boolean,
) => { status: number; stdout: string; stderr: string };

const runWrangler: Wrangler = (args, capture) => {
  const child = spawnSync(process.execPath, ['node_modules/wrangler/bin/wrangler.js', ...args], {
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    env: capture ? { ...process.env, FORCE_COLOR: '0' } : process.env,
  });
  return { status: child.status ?? 1, stdout: child.stdout ?? '', stderr: child.stderr ?? '' };
};

/** The names of the deployed Worker's secrets, or why they could not be listed. */
function deployedSecrets(
  wrangler: Wrangler,
  scope: string[],
): { ok: true; names: Set<string> } | { ok: false; why: string } {
  const listed = wrangler(['secret', 'list', '--format', 'json', ...scope], true);
  const json = listed.stdout.slice(Math.max(0, listed.stdout.indexOf('[')));
  if (listed.status === 0) {
    try {
      const names = (JSON.parse(json) as { name: string }[]).map((secret) => secret.name);
      return { ok: true, names: new Set(names) };
    } catch {
      // fall through: say what wrangler said
    }
  }
  const said = stripVTControlCharacters(`${listed.stderr}\n${listed.stdout}`)
    .split('\n')
    .map((line) => line.replace(/^\s*(✘\s*)?\[ERROR\]\s*/, '').trim())
    .find((line) => line.length > 0);
  return { ok: false, why: said ?? `wrangler secret list exited with ${listed.status}` };
}

/** Checks, then deploys; returns the exit code. */
export function deploy(argv: readonly string[], wrangler: Wrangler = runWrangler): number {
  const environment = flag(argv, ['--env', '-e']);
  const configPath = flag(argv, ['--config', '-c']);
  const dryRun = argv.includes('--dry-run');
  const scope = [
    ...(environment === undefined ? [] : ['--env', environment]),
    ...(configPath === undefined ? [] : ['--config', configPath]),
  ];
  const result = checkConfig({
    ...(environment === undefined ? {} : { environment }),
    ...(configPath === undefined ? {} : { configPath }),
    deploy: !dryRun,
    remote: true,
  });
  const label = `${configPath ?? 'wrangler.toml'}${environment ? ` [env.${environment}]` : ''}`;
  if (result.errors.length === 0 && !dryRun) {
    const deployed = deployedSecrets(wrangler, scope);
    if (deployed.ok) {
      for (const secret of result.secrets) {
        if (secret.optional || deployed.names.has(secret.name)) continue;
        result.errors.push(
          `secret ${secret.name} is not set on the deployed Worker (${secret.usedBy.join(', ')}): run \`${putCommand(secret.name, environment)}\``,
        );
      }
    } else {
      console.warn(
        `could not list the deployed Worker's secrets (${deployed.why}); make sure each of these is set:`,
      );
      printSecrets(result.secrets, (name) => putCommand(name, environment));
    }
  }
  if (!report(result, label)) {
    console.error('nothing was deployed');
    return 1;
  }
  return wrangler(['deploy', ...argv], false).status;
}

if (import.meta.main) process.exit(deploy(process.argv.slice(2)));
