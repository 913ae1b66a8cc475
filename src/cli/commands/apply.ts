import { type Api, errorOf, errorsOf, failure, isObject, segment } from '../api.ts';
import { type CommandContext, defineCommand } from '../command.ts';
import { CliError, UsageError } from '../errors.ts';
import { EXIT, type ExitCode } from '../exit-codes.ts';
import { type DesiredPoller, readFleetFolder } from '../fleet-folder.ts';
import { listAllPollers } from '../fleet-list.ts';
import { hasChanges, type Plan, type PlanStep, planFleet } from '../plan.ts';
import { planLines } from '../plan-text.ts';

export const apply = defineCommand({
  usage: 'apply DIR [--prune [--selector KEY=VALUE]] [--yes]',
  summary: 'make the runtime fleet equal a folder of configs (plan; --yes applies it)',
  help: [
    'DIR holds one file per runtime poller, NAME.toml or NAME.json, whose name is the',
    "poller's. Every file is read and checked first (a file that does not parse names",
    'itself, and nothing is sent); then the plan is printed: create, replace (with the',
    'keys that changed), unchanged (deep-equal to GET /pollers/NAME/config), and with',
    '--prune, delete: runtime pollers not in DIR. Static pollers (wrangler.toml) are never',
    'deleted, and a file naming one is an error; so is --prune with no poller file in DIR.',
    '--selector KEY=VALUE limits --prune to the runtime pollers with that label: the ones',
    'this folder owns, so pollers created through the API by anything else are never pruned.',
    '',
    'Without --yes nothing is changed. With --yes, creates and replaces go first; if any',
    'is refused, its errors are printed and no poller is deleted.',
    '',
    'Exit codes: 0 in sync, or applied; 2 the plan has changes and --yes was not given;',
    '1 an error (a bad file, a static poller named, an HTTP failure, a PUT refused).',
  ],
  positionals: ['dir'],
  flags: { prune: 'boolean', yes: 'boolean', selector: 'string' },
  async run(context, { args, flags }) {
    const selector = flags.selector === undefined ? null : selectorOf(flags.selector);
    if (selector !== null && flags.prune !== true) {
      throw new UsageError('--selector says which runtime pollers --prune may delete: add --prune');
    }
    const desired = await readFolder(context, args.dir);
    if (desired === null) return EXIT.error;
    const api = context.api();
    const prune = flags.prune === true ? { selector } : null;
    const plan = await planAgainst(api, args.dir, desired, prune);
    context.out(`Plan for ${api.url} from ${args.dir}:`);
    for (const line of planLines(plan, args.dir)) context.out(line);
    if (plan.errors.length > 0) {
      for (const error of plan.errors) context.err(`error: ${error}`);
      context.err('Nothing was applied.');
      return EXIT.error;
    }
    if (!hasChanges(plan)) {
      context.out('In sync: nothing to do.');
      return EXIT.ok;
    }
    if (!flags.yes) {
      context.out('Nothing was changed: run again with --yes to apply this plan.');
      return EXIT.changes;
    }
    return applyPlan(context, api, plan, args.dir);
  },
});

/** `KEY=VALUE`, as `pollers list --label` and GET /pollers?label= take a label. */
function selectorOf(text: string): { key: string; value: string } {
  const split = text.indexOf('=');
  if (split <= 0)
    throw new UsageError(`--selector ${text}: must be KEY=VALUE, e.g. managed_by=fleet-repo`);
  return { key: text.slice(0, split), value: text.slice(split + 1) };
}

/** The folder's pollers, or null once every problem in it is reported. */
async function readFolder(context: CommandContext, dir: string): Promise<DesiredPoller[] | null> {
  let files: Awaited<ReturnType<typeof context.io.readDir>>;
  try {
    files = await context.io.readDir(dir);
  } catch (error) {
    throw new CliError(`cannot read ${dir}: ${(error as Error).message ?? String(error)}`);
  }
  const read = readFleetFolder(dir, files);
  if (!read.ok) {
    for (const error of read.errors) context.err(`error: ${error}`);
    context.err(
      `Nothing was applied: fix ${read.errors.length === 1 ? 'this file' : 'these files'} first.`,
    );
    return null;
  }
  for (const file of read.ignored) context.err(`note: ${file} ignored (not .toml or .json)`);
  return read.pollers;
}

/** How many stored configs are asked for at once. */
const CONCURRENT_READS = 8;

async function planAgainst(
  api: Api,
  dir: string,
  desired: readonly DesiredPoller[],
  prune: { selector: { key: string; value: string } | null } | null,
): Promise<Plan> {
  const listed = await listAllPollers(api);
  const runtime = new Set(listed.filter((p) => p.kind === 'runtime').map((p) => p.name));
  const names = desired.map((poller) => poller.name).filter((name) => runtime.has(name));
  const stored = new Map<string, unknown>();
  for (let start = 0; start < names.length; start += CONCURRENT_READS) {
    await Promise.all(
      names.slice(start, start + CONCURRENT_READS).map(async (name) => {
        const path = `/pollers/${segment(name)}/config`;
        const reply = await api.call('GET', path);
        // Gone since it was listed (deleted meanwhile): the plan creates it.
        if (reply.status === 404) return;
        if (reply.status !== 200 || !isObject(reply.body)) throw failure('GET', path, reply);
        stored.set(name, reply.body.config);
      }),
    );
  }
  return planFleet({
    dir,
    desired,
    listed,
    stored,
    prune: prune !== null,
    selector: prune?.selector,
  });
}

/** The longest reason DELETE /pollers/:name keeps. */
const MAX_REASON_CHARS = 500;

async function applyPlan(
  context: CommandContext,
  api: Api,
  plan: Plan,
  dir: string,
): Promise<ExitCode> {
  const done = { created: 0, replaced: 0, deleted: 0, refused: 0 };
  for (const step of plan.steps) {
    if (step.action !== 'create' && step.action !== 'replace') continue;
    if (await put(context, api, step)) done[step.action === 'create' ? 'created' : 'replaced']++;
    else done.refused++;
  }
  const deletions = plan.steps.filter((step) => step.action === 'delete');
  if (done.refused > 0 && deletions.length > 0) {
    // A deletion cannot be undone: none runs after a refusal, so a fix and a rerun decide.
    context.err(
      `not deleted, because a create or replace was refused: ${deletions.map((step) => step.name).join(', ')}`,
    );
  } else {
    const reason = `tidemark apply --prune: not in ${dir}`.slice(0, MAX_REASON_CHARS);
    for (const { name } of deletions) {
      const path = `/pollers/${segment(name)}?${new URLSearchParams({ reason })}`;
      const reply = await api.call('DELETE', path);
      // Already gone is what the plan wanted.
      if (reply.status === 200 || reply.status === 404) {
        context.out(`deleted ${name}`);
        done.deleted++;
      } else {
        context.err(failure('DELETE', path, reply).message);
        done.refused++;
      }
    }
  }
  const refused = done.refused > 0 ? `, ${done.refused} refused` : '';
  context.out(
    `Applied: ${done.created} created, ${done.replaced} replaced, ${done.deleted} deleted${refused}.`,
  );
  return done.refused > 0 ? EXIT.error : EXIT.ok;
}

/** PUTs one config and reports its answer; whether it was stored. */
async function put(
  context: CommandContext,
  api: Api,
  step: Extract<PlanStep, { action: 'create' | 'replace' }>,
): Promise<boolean> {
  const path = `/pollers/${segment(step.name)}`;
  const reply = await api.call('PUT', path, step.config);
  if (reply.status !== 200 && reply.status !== 201) {
    context.err(
      `refused ${step.name} (${step.file}): HTTP ${reply.status}: ${errorOf(reply.body)}`,
    );
    for (const error of errorsOf(reply.body)) context.err(`  - ${error}`);
    return false;
  }
  const body = isObject(reply.body) ? reply.body : {};
  const verb = reply.status === 201 ? 'created' : 'replaced';
  context.out(`${verb} ${step.name} (version ${String(body.version)})`);
  const list = (key: string) => (Array.isArray(body[key]) ? body[key].map(String) : []);
  // Stored, but not running yet: what is missing, and how to give it.
  for (const secret of list('secrets_unset')) {
    context.out(`  secret ${secret} was unset: the new config sends it to another origin`);
  }
  for (const secret of list('unset_secrets')) {
    context.out(
      `  needs secret ${secret}: printf %s "$VALUE" | npx tidemark secrets set ${step.name} ${secret}`,
    );
  }
  for (const error of list('config_errors')) context.out(`  config error: ${error}`);
  return true;
}
