import { failure, isObject, segment } from '../api.ts';
import { type CommandContext, defineCommand } from '../command.ts';
import { CliError, UsageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { configFormat, readConfigFile } from '../fleet-folder.ts';
import { json, table } from '../table.ts';

export const preview = defineCommand({
  usage:
    'preview FILE.toml|FILE.json|NAME [--from ISO|checkpoint] [--pages N] [--records N] [--json]',
  summary: 'read one window as a run would, delivering and storing nothing (POST …/preview)',
  help: [
    'A FILE (NAME.toml or NAME.json, as apply reads them) is a config no poller has yet:',
    'POST /pollers/preview reads it under FLEET_POLICY, as a PUT would. A NAME is an',
    'existing poller, static or runtime, paused or not: POST /pollers/NAME/preview, under',
    'its lease, with its own secrets.',
    '',
    'Prints the warnings first, then every request (secrets redacted), the records as a',
    'table, and the checkpoint a run would commit. --from starts the window at a time',
    "(default: the poller's checkpoint; a file's start_from, else a day ago); --pages (default",
    '3, at most 20) and --records (default 20) bound what is read. --json prints the answer.',
    'Exit 1 when the config is refused (each error is printed) or the preview failed.',
  ],
  positionals: ['target'],
  flags: { from: 'string', pages: 'string', records: 'string', json: 'boolean' },
  async run(context, { args, flags }) {
    const options = {
      ...(flags.pages === undefined ? {} : { pages: count('--pages', flags.pages) }),
      ...(flags.records === undefined ? {} : { records: count('--records', flags.records) }),
    };
    const format = configFormat(args.target);
    let path: string;
    let body: Record<string, unknown>;
    if (format === undefined) {
      path = `/pollers/${segment(args.target)}/preview`;
      body = { ...options, ...(flags.from === undefined ? {} : { from: flags.from }) };
    } else {
      if (flags.from === 'checkpoint') {
        throw new UsageError(
          '--from checkpoint: a config file has no checkpoint; give a time, or leave --from out',
        );
      }
      const config = await readFile(context, args.target, format);
      path = '/pollers/preview';
      const name = fileName(args.target);
      body = {
        config,
        ...(name === null ? {} : { name }),
        ...options,
        ...(flags.from === undefined ? {} : { from: flags.from }),
      };
    }
    const reply = await context.api().call('POST', path, body);
    if (reply.status !== 200 || !isObject(reply.body)) throw failure('POST', path, reply);
    if (flags.json) {
      context.out(json(reply.body));
      return EXIT.ok;
    }
    for (const line of previewLines(reply.body)) context.out(line);
    return EXIT.ok;
  },
});

/** A count flag's value: a whole number from 1. */
function count(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag} ${value}: must be a whole number from 1`);
  return n;
}

async function readFile(
  context: CommandContext,
  file: string,
  format: NonNullable<ReturnType<typeof configFormat>>,
): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await context.io.readFile(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message ?? String(error)}`);
  }
  const read = readConfigFile(file, format, text);
  if (!read.ok) throw new CliError(read.error);
  return read.config;
}

/** The poller name a file stands for (`fleet/acme.toml`: acme), as apply names it. */
function fileName(file: string): string | null {
  const base = file.split(/[\\/]/).at(-1) ?? '';
  const name = base.slice(0, base.lastIndexOf('.'));
  return name === '' ? null : name;
}

/** The answer as people read it: warnings first, then the window, requests, records, checkpoint. */
export function previewLines(answer: Record<string, unknown>): string[] {
  const lines: string[] = [];
  const warnings = list(answer.warnings);
  if (warnings.length === 0) lines.push('No warnings.');
  else {
    lines.push(`${warnings.length} warning(s):`);
    for (const warning of warnings)
      lines.push(`  ! ${text(warning.kind)}: ${text(warning.message)}`);
  }
  const window = isObject(answer.window) ? answer.window : {};
  lines.push(
    '',
    `Window: ${text(window.from)} to ${text(window.to)}${window.bounded === true ? '' : ' (open: the upstream gets no end)'}; ${text(answer.pages)} page(s) read${answer.complete === true ? ', to its end' : ''}`,
    '',
    'Requests:',
  );
  const requests = list(answer.requests).map((request) => [
    text(request.method),
    request.status === null
      ? request.error === undefined
        ? 'none'
        : 'error'
      : text(request.status),
    `${text(request.ms)} ms`,
    `${text(request.bytes)} B`,
    text(request.url),
  ]);
  for (const line of table([['METHOD', 'STATUS', 'TIME', 'BYTES', 'URL'], ...requests]))
    lines.push(`  ${line}`);
  const records = list(answer.records);
  lines.push('', `Records (${records.length}):`);
  const rows = records.map((record) => [
    record.id === null ? '-' : text(record.id),
    record.updated_at === null ? '-' : text(record.updated_at),
    record.malformed !== undefined ? 'unreadable' : record.delete === true ? 'delete' : 'upsert',
    oneLine(record.malformed !== undefined ? text(record.malformed) : recordText(record)),
  ]);
  for (const line of table([['ID', 'UPDATED_AT', 'OP', 'RECORD'], ...rows]))
    lines.push(`  ${line}`);
  const checkpoint = isObject(answer.checkpoint) ? answer.checkpoint : {};
  lines.push(
    '',
    `Checkpoint: from ${text(checkpoint.from)} (${text(checkpoint.from_source)}); a run would commit ${checkpoint.would_commit === null ? 'nothing' : text(checkpoint.would_commit)}: ${text(checkpoint.note)}`,
    'Nothing was delivered or stored.',
  );
  return lines;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

function recordText(record: Record<string, unknown>): string {
  return typeof record.record_text === 'string' ? record.record_text : text(record.record);
}

/** A record on one line of a table: cut, so the table stays readable. */
function oneLine(value: string): string {
  const flat = value.replace(/\s+/g, ' ');
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
}
