/**
 * A failure the CLI reports as one message and exit code 1 (turned into output in one place,
 * cli/index.ts). Its message never holds TIDEMARK_TOKEN or a secret's value.
 */
export class CliError extends Error {
  override readonly name: string = 'CliError';
}

/** A wrong command line: reported with a pointer to the command's `--help`. */
export class UsageError extends CliError {
  override readonly name = 'UsageError';
}
