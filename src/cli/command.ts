import type { Api } from './api.ts';
import { type FlagKind, type ParsedArgs, parseArgs } from './args.ts';
import { UsageError } from './errors.ts';
import type { ExitCode } from './exit-codes.ts';
import type { CliIo } from './io.ts';

/** What a command runs with. */
export interface CommandContext {
  io: CliIo;
  /** The admin API, built on first use: `apply` checks its folder before it needs TIDEMARK_*. */
  api(): Api;
  /** One line to stdout. */
  out(line: string): void;
  /** One line to stderr. */
  err(line: string): void;
}

/** One command of the CLI, its arguments already erased to words (cli/commands/index.ts maps them). */
export interface Command {
  /** `pollers pause NAME [--reason R]`: the synopsis, after `tidemark`. */
  usage: string;
  /** One line, for the list of commands. */
  summary: string;
  /** More lines for its `--help`: what it calls and answers. */
  help: readonly string[];
  run(context: CommandContext, words: readonly string[]): Promise<ExitCode>;
}

/** A command whose positionals and flags are typed in its `run`, and parsed before it. */
export function defineCommand<
  const P extends string,
  const F extends Record<string, FlagKind>,
>(definition: {
  usage: string;
  summary: string;
  help?: readonly string[];
  positionals: readonly P[];
  flags: F;
  run(context: CommandContext, parsed: ParsedArgs<P, F>): Promise<ExitCode>;
}): Command {
  return {
    usage: definition.usage,
    summary: definition.summary,
    help: definition.help ?? [],
    run: (context, words) => {
      const parsed = parseArgs(words, definition);
      if (!parsed.ok) throw new UsageError(parsed.error);
      return definition.run(context, parsed.value);
    },
  };
}
