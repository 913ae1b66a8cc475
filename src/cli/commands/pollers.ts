import { errorOf, failure, isObject, segment } from '../api.ts';
import { defineCommand } from '../command.ts';
import { EXIT } from '../exit-codes.ts';
import { type ListedPoller, listAllPollers, liveStaticFigures } from '../fleet-list.ts';
import { json, table } from '../table.ts';

/** The admin API of the fleet and of one poller, one command per route. */

export const pollersList = defineCommand({
  usage: 'pollers list [--label KEY=VALUE] [--state STATE] [--json]',
  summary: 'every poller, static and runtime (GET /pollers, all pages)',
  help: [
    'Lists every poller from the registry, following next_cursor to the last page.',
    '--label keeps the pollers with that label; --state those in that state',
    '(ok, warning, running, lagging, silent, failing, paused, misconfigured, unknown).',
    "A static poller's figures are its object's own, read live (GET /status): REPORTED says",
    '"live"; a runtime poller\'s are what it last reported to the registry, and REPORTED says when.',
    '--json prints the items as GET /pollers gives them, all pages in one array.',
  ],
  positionals: [],
  flags: { label: 'string', state: 'string', json: 'boolean' },
  async run(context, { flags }) {
    const pollers = await listAllPollers(context.api(), {
      ...(flags.label === undefined ? {} : { label: flags.label }),
      ...(flags.state === undefined ? {} : { state: flags.state }),
    });
    if (flags.json) {
      context.out(json(pollers));
      return EXIT.ok;
    }
    if (pollers.length === 0) {
      context.out('no pollers');
      return EXIT.ok;
    }
    const live = pollers.some((poller) => poller.kind === 'static')
      ? await liveStaticFigures(context.api())
      : new Map();
    const rows = pollers.map((listed) => {
      const figures = live.get(listed.name);
      const poller: ListedPoller = figures === undefined ? listed : { ...listed, ...figures };
      return [
        poller.name,
        poller.kind,
        poller.state,
        poller.lag_seconds === null ? '-' : `${poller.lag_seconds}s`,
        String(poller.dead_letters),
        poller.checkpoint ?? '-',
        figures === undefined ? String(poller.reported_at ?? '-') : 'live',
        Object.entries(poller.labels ?? {})
          .map(([key, value]) => `${key}=${value}`)
          .join(','),
      ];
    });
    for (const line of table([
      ['NAME', 'KIND', 'STATE', 'LAG', 'DEAD', 'CHECKPOINT', 'REPORTED', 'LABELS'],
      ...rows,
    ])) {
      context.out(line);
    }
    return EXIT.ok;
  },
});

export const pollersGet = defineCommand({
  usage: 'pollers get NAME [--json]',
  summary: "one poller's status and stored config (GET /status/NAME, GET /pollers/NAME/config)",
  help: ['The config is shown as written: secrets stay ${NAME}, never their values.'],
  positionals: ['name'],
  flags: { json: 'boolean' },
  async run(context, { args, flags }) {
    const api = context.api();
    const statusPath = `/status/${segment(args.name)}`;
    const configPath = `/pollers/${segment(args.name)}/config`;
    const [status, config] = await Promise.all([
      api.call('GET', statusPath),
      api.call('GET', configPath),
    ]);
    if (status.status !== 200) throw failure('GET', statusPath, status);
    if (config.status !== 200) throw failure('GET', configPath, config);
    if (flags.json) {
      context.out(json({ status: status.body, config: config.body }));
      return EXIT.ok;
    }
    const s = isObject(status.body) ? status.body : {};
    const c = isObject(config.body) ? config.body : {};
    const lastRun = isObject(s.last_run) ? s.last_run : null;
    const deadLetters = isObject(s.dead_letters) ? s.dead_letters : {};
    const lines: [string, unknown][] = [
      ['name', args.name],
      ['kind', c.kind === 'runtime' ? `runtime (version ${c.version})` : c.kind],
      ['state', s.state],
      ['paused', s.paused],
      ['checkpoint', s.checkpoint],
      ['lag_seconds', s.lag_seconds],
      ['last_run', lastRun === null ? null : `${lastRun.outcome} at ${lastRun.finished_at}`],
      ['next_alarm_at', s.next_alarm_at],
      ['dead_letters', deadLetters.count],
    ];
    for (const line of table(lines.map(([key, value]) => [`${key}:`, String(value ?? '-')]))) {
      context.out(line);
    }
    for (const key of ['config_errors', 'alerts', 'warnings'] as const) {
      const items = Array.isArray(s[key]) ? (s[key] as unknown[]) : [];
      if (items.length === 0) continue;
      context.out(`${key}:`);
      for (const item of items) context.out(`  - ${String(item)}`);
    }
    context.out('config:');
    for (const line of json(c.config).split('\n')) context.out(`  ${line}`);
    return EXIT.ok;
  },
});

export const pollersDelete = defineCommand({
  usage: 'pollers delete NAME [--reason R]',
  summary: 'delete a runtime poller for good (DELETE /pollers/NAME)',
  help: [
    'Stops it and erases its storage: checkpoint, ledger, dead letters, history, secrets.',
    'The reason (at most 500 characters) is kept in the deletion trail (GET /pollers/deletions).',
    'A static poller (wrangler.toml) cannot be deleted here: remove it from POLLERS.',
  ],
  positionals: ['name'],
  flags: { reason: 'string' },
  async run(context, { args, flags }) {
    const query =
      flags.reason === undefined ? '' : `?${new URLSearchParams({ reason: flags.reason })}`;
    const path = `/pollers/${segment(args.name)}${query}`;
    const reply = await context.api().call('DELETE', path);
    if (reply.status !== 200) throw failure('DELETE', path, reply);
    context.out(`deleted ${args.name}`);
    return EXIT.ok;
  },
});

export const pollersNudge = defineCommand({
  usage: 'pollers nudge NAME',
  summary: 'ask a poller to poll soon (POST /pollers/NAME/nudge)',
  help: ['Prints what became of the nudge: scheduled (and when the run starts), or ignored.'],
  positionals: ['name'],
  flags: {},
  async run(context, { args }) {
    const path = `/pollers/${segment(args.name)}/nudge`;
    const reply = await context.api().call('POST', path);
    if (reply.status !== 202) throw failure('POST', path, reply);
    const body = isObject(reply.body) ? reply.body : {};
    const at = typeof body.run_at === 'string' ? `, run at ${body.run_at}` : '';
    const reason = typeof body.reason === 'string' ? ` (${body.reason})` : '';
    context.out(`nudged ${args.name}: ${String(body.outcome)}${reason}${at}`);
    return EXIT.ok;
  },
});

export const pollersRun = defineCommand({
  usage: 'pollers run NAME [--json]',
  summary: 'run a poller now and wait for the run (POST /pollers/NAME/run)',
  help: [
    'Exits 1 when the run failed, or could not start: a run or replay holds the lease, the',
    'poller is paused, rate limited or misconfigured (the reason is printed).',
  ],
  positionals: ['name'],
  flags: { json: 'boolean' },
  async run(context, { args, flags }) {
    const path = `/pollers/${segment(args.name)}/run`;
    const reply = await context.api().call('POST', path);
    if (flags.json) context.out(json(reply.body));
    if (reply.status === 409) {
      const body = isObject(reply.body) ? reply.body : {};
      const why = body.reason ?? body.outcome ?? errorOf(reply.body);
      const errors = Array.isArray(body.errors) ? `: ${body.errors.join('; ')}` : '';
      context.err(`${args.name} did not run: ${String(why)}${errors}`);
      return EXIT.error;
    }
    if (reply.status !== 200) throw failure('POST', path, reply);
    const run = isObject(reply.body) && isObject(reply.body.run) ? reply.body.run : {};
    if (!flags.json) {
      const error = typeof run.error === 'string' ? `: ${run.error}` : '';
      context.out(
        `ran ${args.name}: ${String(run.outcome)}, ${count(run.records, 'record')}, ${count(run.pages, 'page')}${error}`,
      );
    }
    return run.outcome === 'failed' ? EXIT.error : EXIT.ok;
  },
});

export const pollersPause = defineCommand({
  usage: 'pollers pause NAME [--reason R]',
  summary: 'pause a poller: it skips every trigger until resumed (POST /pollers/NAME/pause)',
  help: ['The reason (at most 500 characters) is kept in its audit log (status.audit).'],
  positionals: ['name'],
  flags: { reason: 'string' },
  async run(context, { args, flags }) {
    const path = `/pollers/${segment(args.name)}/pause`;
    const body = flags.reason === undefined ? {} : { reason: flags.reason };
    const reply = await context.api().call('POST', path, body);
    if (reply.status !== 200) throw failure('POST', path, reply);
    context.out(`paused ${args.name}`);
    return EXIT.ok;
  },
});

export const pollersResume = defineCommand({
  usage: 'pollers resume NAME',
  summary: 'resume a paused poller (POST /pollers/NAME/resume)',
  positionals: ['name'],
  flags: {},
  async run(context, { args }) {
    const path = `/pollers/${segment(args.name)}/resume`;
    const reply = await context.api().call('POST', path);
    if (reply.status !== 200) throw failure('POST', path, reply);
    context.out(`resumed ${args.name}`);
    return EXIT.ok;
  },
});

/** `1 page`, `12 records`. */
const count = (value: unknown, noun: string) => `${String(value)} ${noun}${value === 1 ? '' : 's'}`;
