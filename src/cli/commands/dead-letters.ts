import { allPages } from '../all-pages.ts';
import { type Api, failure, isObject, segment } from '../api.ts';
import { defineCommand } from '../command.ts';
import { UsageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { json, table } from '../table.ts';

/** Dead letters of one poller (ADMIN_TOKEN: they hold whole records). */

export const deadLettersList = defineCommand({
  usage: 'dead-letters list POLLER [--json]',
  summary: "a poller's dead letters, all pages (GET /pollers/POLLER/dead-letters)",
  help: [
    'Shows each key, record id, attempts, last failure and error; --json prints the items',
    'with their records. A key is what replay and discard take.',
  ],
  positionals: ['poller'],
  flags: { json: 'boolean' },
  async run(context, { args, flags }) {
    const items = await allDeadLetters(context.api(), args.poller);
    if (flags.json) {
      context.out(json(items));
      return EXIT.ok;
    }
    if (items.length === 0) {
      context.out(`no dead letters in ${args.poller}`);
      return EXIT.ok;
    }
    const rows = items.map((item) => [
      String(item.key),
      String(item.id ?? '-'),
      String(item.attempts ?? '-'),
      String(item.last_failure ?? '-'),
      oneLine(String(item.error ?? '')),
    ]);
    for (const line of table([['KEY', 'ID', 'ATTEMPTS', 'LAST_FAILURE', 'ERROR'], ...rows])) {
      context.out(line);
    }
    return EXIT.ok;
  },
});

export const deadLettersReplay = defineCommand({
  usage: 'dead-letters replay POLLER KEY',
  summary: 'deliver one dead letter again now (POST /pollers/POLLER/dead-letters/KEY/replay)',
  help: [
    'Removed once delivered. Exits 1 when it is not: the delivery failed (its error is',
    'printed), a run holds the lease, or the record cannot be replayed.',
  ],
  positionals: ['poller', 'key'],
  flags: {},
  async run(context, { args }) {
    const path = `/pollers/${segment(args.poller)}/dead-letters/${segment(args.key)}/replay`;
    const reply = await context.api().call('POST', path);
    const body = isObject(reply.body) ? reply.body : {};
    if (reply.status === 200) {
      context.out(`replayed ${args.key}: delivered`);
      return EXIT.ok;
    }
    if (typeof body.outcome !== 'string') throw failure('POST', path, reply);
    const error = typeof body.error === 'string' ? `: ${body.error}` : '';
    context.err(`replay of ${args.key}: ${body.outcome}${error}`);
    return EXIT.error;
  },
});

export const deadLettersDiscard = defineCommand({
  usage: 'dead-letters discard POLLER KEY --reason R',
  summary: 'discard one dead letter (DELETE /pollers/POLLER/dead-letters/KEY)',
  help: ['--reason is required (at most 500 characters): it is kept in the audit log.'],
  positionals: ['poller', 'key'],
  flags: { reason: 'string' },
  async run(context, { args, flags }) {
    // The route refuses a discard without a reason; say so before anything is sent.
    if (!flags.reason?.trim())
      throw new UsageError('--reason is required: say why it is discarded');
    const path = `/pollers/${segment(args.poller)}/dead-letters/${segment(args.key)}`;
    const reply = await context.api().call('DELETE', path, { reason: flags.reason });
    if (reply.status !== 200) throw failure('DELETE', path, reply);
    context.out(`discarded ${args.key}`);
    return EXIT.ok;
  },
});

/** The most a page of dead letters can hold: fewer round trips (each page also stops at 4 MB). */
const PAGE = 500;

function allDeadLetters(api: Api, poller: string): Promise<Record<string, unknown>[]> {
  const path = `/pollers/${segment(poller)}/dead-letters`;
  return allPages(api, path, { limit: String(PAGE) }, 'dead letters');
}

const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
};
