/**
 * A command's arguments: named positionals, then `--flag`s that take a value (`--reason R`,
 * `--reason=R`) or none (`--yes`). Anything else is refused rather than ignored: a typo in
 * `--prune` must not quietly apply a plan without it.
 */

export type FlagKind = 'string' | 'boolean';

export interface ArgSpec<
  P extends string = string,
  F extends Record<string, FlagKind> = Record<string, FlagKind>,
> {
  positionals: readonly P[];
  flags: F;
}

/** What each flag gives: a string flag its value, a boolean flag `true`; absent, undefined. */
export type FlagValues<F extends Record<string, FlagKind>> = {
  [K in keyof F]?: F[K] extends 'boolean' ? true : string;
};

export interface ParsedArgs<P extends string, F extends Record<string, FlagKind>> {
  args: Record<P, string>;
  flags: FlagValues<F>;
}

export type ParseResult<P extends string, F extends Record<string, FlagKind>> =
  | { ok: true; value: ParsedArgs<P, F> }
  | { ok: false; error: string };

/** Parses the words after a command's name against its spec. */
export function parseArgs<P extends string, F extends Record<string, FlagKind>>(
  words: readonly string[],
  spec: ArgSpec<P, F>,
): ParseResult<P, F> {
  const kinds: Readonly<Record<string, FlagKind>> = spec.flags;
  const positionals: string[] = [];
  const flags: Record<string, string | true> = {};
  let onlyPositionals = false;
  for (let index = 0; index < words.length; index++) {
    const word = words[index] ?? '';
    if (onlyPositionals || !word.startsWith('--') || word === '-') {
      positionals.push(word);
      continue;
    }
    if (word === '--') {
      onlyPositionals = true;
      continue;
    }
    const equals = word.indexOf('=');
    const name = word.slice(2, equals === -1 ? undefined : equals);
    const kind = Object.hasOwn(kinds, name) ? kinds[name] : undefined;
    if (kind === undefined) return { ok: false, error: `unknown option --${name}` };
    if (Object.hasOwn(flags, name)) return { ok: false, error: `--${name} is given twice` };
    if (kind === 'boolean') {
      if (equals !== -1) return { ok: false, error: `--${name} takes no value` };
      flags[name] = true;
      continue;
    }
    const value = equals === -1 ? words[++index] : word.slice(equals + 1);
    // `--reason --yes` is a forgotten value far more often than a reason that starts with --.
    if (value === undefined || (equals === -1 && value.startsWith('--'))) {
      return {
        ok: false,
        error: `--${name} needs a value (--${name}=VALUE for one starting with --)`,
      };
    }
    flags[name] = value;
  }
  const missing = spec.positionals.slice(positionals.length);
  if (missing.length > 0) {
    return { ok: false, error: `missing ${missing.map((name) => name.toUpperCase()).join(' ')}` };
  }
  const extra = positionals.slice(spec.positionals.length);
  if (extra.length > 0) return { ok: false, error: `unexpected argument "${extra[0]}"` };
  const args = Object.fromEntries(
    spec.positionals.map((name, index) => [name, positionals[index] ?? '']),
  ) as Record<P, string>;
  return { ok: true, value: { args, flags: flags as FlagValues<F> } };
}

/** Whether the words ask for help (`--help` or `-h`, anywhere before a `--`). */
export function asksForHelp(words: readonly string[]): boolean {
  const end = words.indexOf('--');
  return (end === -1 ? words : words.slice(0, end)).some(
    (word) => word === '--help' || word === '-h',
  );
}
