import { type Api, apiFromEnv } from './api.ts';
import { asksForHelp } from './args.ts';
import type { Command, CommandContext } from './command.ts';
import { COMMANDS, type CommandName } from './commands/index.ts';
import { CliError, UsageError } from './errors.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import type { CliIo } from './io.ts';

export { EXIT, type ExitCode } from './exit-codes.ts';
export type { CliIo, FolderFile } from './io.ts';

/**
 * `tidemark …`: finds the command the words name, runs it, and turns every failure into a
 * message on stderr and an exit code (here only, as the Worker's app.onError does for routes).
 */
export async function runCli(io: CliIo): Promise<ExitCode> {
  const context = contextOf(io);
  const found = findCommand(io.argv);
  if (found === null) {
    const [first] = io.argv;
    if (first !== undefined && (asksForHelp(io.argv) || first === 'help')) {
      for (const line of generalHelp(first)) context.out(line);
      return EXIT.ok;
    }
    if (first !== undefined) {
      context.err(`tidemark: "${io.argv.slice(0, 2).join(' ')}" is not a command`);
      context.err('');
    }
    for (const line of generalHelp(first)) context.err(line);
    return EXIT.error;
  }
  const { name, command, words } = found;
  if (asksForHelp(words)) {
    for (const line of commandHelp(command)) context.out(line);
    return EXIT.ok;
  }
  try {
    return await command.run(context, words);
  } catch (error) {
    if (error instanceof UsageError) {
      context.err(`tidemark ${name}: ${error.message}`);
      context.err(`usage: tidemark ${command.usage}  (tidemark ${name} --help)`);
      return EXIT.error;
    }
    if (error instanceof CliError) {
      context.err(`tidemark ${name}: ${error.message}`);
      return EXIT.error;
    }
    // Not ours: a bug, but still one line and an exit code a CI job can rely on.
    context.err(`tidemark ${name}: unexpected error: ${String(error)}`);
    return EXIT.error;
  }
}

function contextOf(io: CliIo): CommandContext {
  let api: Api | undefined;
  return {
    io,
    api: () => {
      api ??= apiFromEnv(io.env, io.fetch);
      return api;
    },
    out: (line) => io.stdout(`${line}\n`),
    err: (line) => io.stderr(`${line}\n`),
  };
}

/** The command the first one or two words name, and the words after them. */
function findCommand(
  argv: readonly string[],
): { name: CommandName; command: Command; words: readonly string[] } | null {
  for (const length of [2, 1]) {
    const name = argv.slice(0, length).join(' ');
    if (argv.length >= length && Object.hasOwn(COMMANDS, name)) {
      const known = name as CommandName;
      return { name: known, command: COMMANDS[known], words: argv.slice(length) };
    }
  }
  return null;
}

/** All commands, or those of one group (`tidemark pollers --help`). */
function generalHelp(group: string | undefined): string[] {
  const names = Object.keys(COMMANDS) as CommandName[];
  const inGroup = names.filter((name) => name.split(' ')[0] === group);
  const shown = inGroup.length > 0 ? inGroup : names;
  return [
    'tidemark: the admin API of a tidemark Worker, and its runtime fleet as code.',
    '',
    'usage: npx tidemark <command> [options]',
    '',
    ...shown.flatMap((name) => [`  ${COMMANDS[name].usage}`, `      ${COMMANDS[name].summary}`]),
    '',
    'Environment:',
    "  TIDEMARK_URL    the Worker's address, e.g. https://tidemark.example.workers.dev",
    '  TIDEMARK_TOKEN  ADMIN_TOKEN (STATUS_TOKEN is enough for list and get); never printed',
    '',
    'Exit codes: 0 done (or in sync), 1 error, 2 apply found changes and --yes was not given.',
    '`tidemark <command> --help` says more about one command; docs/cli.md about all of them.',
  ];
}

function commandHelp(command: Command): string[] {
  return [
    `usage: tidemark ${command.usage}`,
    '',
    command.summary,
    ...(command.help.length > 0 ? ['', ...command.help] : []),
  ];
}
