import * as z from 'zod';
import { asTemplate, type Reference } from './interpolate.ts';

type Issue = z.core.$ZodIssue;
type Schema = z.core.$ZodType;

/** Longest echo of a given string in a message: enough to recognise it, never a wall of text. */
const MAX_ECHO = 60;

/**
 * One line for a config issue: the key, what it expects and what it was given
 * (`lease_ttl: expected a duration string like "15m", got the number 900`). Strings given
 * are echoed as their template (`${NAME}`), never as a secret's value.
 */
export function describeIssue(issue: Issue, schema: Schema, references: Reference[]): string {
  const path = issue.path.join('.') || '(poller)';
  const got = () => given(issue.input, references);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys
        .map((key) => `${path === '(poller)' ? key : `${path}.${key}`}: unknown key`)
        .join('; ');
    case 'invalid_type': {
      if (issue.input === undefined) {
        // A key only some `type`s need says which (`is required when deliver.type = "queue"`).
        const why = issue.message.startsWith('is required when') ? issue.message : 'is required';
        return `${path}: ${why}`;
      }
      const expected = expectedType(issue.expected, schemaAt(schema, issue.path));
      const quote =
        expected === 'a string' && ['number', 'boolean'].includes(typeof issue.input)
          ? ` (quote it: "${String(issue.input)}")`
          : '';
      return `${path}: expected ${expected}, got ${got()}${quote}`;
    }
    case 'invalid_union': {
      // A discriminated union (`deliver`, `source.next`) given a `type` it does not know.
      const { discriminator, options } = issue as { discriminator?: string; options?: unknown[] };
      if (discriminator === undefined || options === undefined) return `${path}: ${issue.message}`;
      const value = (issue.input as Record<string, unknown> | null | undefined)?.[discriminator];
      if (value === undefined) return `${path}: is required`;
      return `${path}: expected one of ${options.map((option) => JSON.stringify(option)).join(', ')}, got ${given(value, references)}`;
    }
    case 'invalid_value':
      return `${path}: expected ${issue.values.length > 1 ? 'one of ' : ''}${issue.values.map((value) => JSON.stringify(value)).join(', ')}, got ${got()}`;
    case 'invalid_format':
      if (issue.format === 'url') return `${path}: expected an http or https URL, got ${got()}`;
      return `${path}: ${issue.message}, got ${got()}`;
    case 'too_small':
    case 'too_big': {
      // A message the schema wrote itself says it better (and its input may be a parsed value).
      if (!/^Too (small|big)/.test(issue.message)) return `${path}: ${issue.message}`;
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      if (issue.origin === 'string' && issue.code === 'too_small' && bound === 1)
        return `${path}: must not be empty`;
      if (issue.origin === 'number' || issue.origin === 'int') {
        const limit = issue.code === 'too_small' ? 'at least' : 'at most';
        return `${path}: expected ${limit} ${String(bound)}, got ${got()}`;
      }
      return `${path}: ${issue.message}`;
    }
    default:
      return `${path}: ${issue.message}`;
  }
}

/** What was given, in the words of the TOML it was written in. */
function given(input: unknown, references: Reference[]): string {
  if (typeof input === 'string') {
    const shown = asTemplate(input, references);
    const cut = shown.length > MAX_ECHO ? `${shown.slice(0, MAX_ECHO)}…` : shown;
    return `the string ${JSON.stringify(cut)}`;
  }
  if (typeof input === 'number') return `the number ${String(input)}`;
  if (typeof input === 'boolean') return String(input);
  if (Array.isArray(input)) return 'an array';
  if (input === null) return 'null';
  if (typeof input === 'object') return 'a table';
  return typeof input;
}

/** Strings that only a duration, a size or a time schema accepts, tried in this order. */
const STRING_KINDS = [
  ['15m', 'a duration string like "15m"'],
  ['16MB', 'a size string like "16MB"'],
  ['2026-01-01T00:00:00Z', 'an ISO 8601 time string like "2026-01-01T00:00:00Z"'],
] as const;

function expectedType(expected: string, at: Schema | undefined): string {
  switch (expected) {
    case 'string': {
      const def = at?._zod.def as { type?: string; format?: string } | undefined;
      if (def?.type === 'string' && def.format === 'url') return 'an http or https URL string';
      if (def?.type === 'pipe' && at) {
        for (const [sample, words] of STRING_KINDS) {
          if (parses(at, sample)) return words;
        }
      }
      return 'a string';
    }
    case 'int':
      return 'a whole number';
    case 'number':
      return (at?._zod.def as { format?: string } | undefined)?.format === 'safeint'
        ? 'a whole number'
        : 'a number';
    case 'boolean':
      return 'true or false';
    case 'object':
    case 'record':
      return 'a table';
    case 'array':
      return 'an array';
    default:
      return expected;
  }
}

function parses(schema: Schema, sample: string): boolean {
  return z.safeParse(schema, sample).success;
}

/** The schema that validates the value at `path` (defaults and optionals unwrapped). */
export function schemaAt(schema: Schema, path: readonly PropertyKey[]): Schema | undefined {
  let node: Schema | undefined = unwrap(schema);
  for (const key of path) {
    if (node === undefined) return undefined;
    node = unwrap(child(node, key));
  }
  return node;
}

function child(node: Schema, key: PropertyKey): Schema | undefined {
  const def = node._zod.def as {
    type: string;
    shape?: Record<string, Schema>;
    valueType?: Schema;
    element?: Schema;
    options?: Schema[];
  };
  if (def.type === 'object') return def.shape?.[String(key)];
  if (def.type === 'record') return def.valueType;
  if (def.type === 'array') return def.element;
  if (def.type === 'union') {
    for (const option of def.options ?? []) {
      const found = child(unwrap(option) ?? option, key);
      if (found) return found;
    }
  }
  return undefined;
}

/** Through optional, default and pipe-into-transform wrappers to the schema that sees input. */
function unwrap(node: Schema | undefined): Schema | undefined {
  let current = node;
  for (let depth = 0; current && depth < 10; depth += 1) {
    const def = current._zod.def as { type: string; innerType?: Schema; in?: Schema };
    if (['optional', 'default', 'prefault', 'nullable', 'readonly'].includes(def.type))
      current = def.innerType;
    else if (
      def.type === 'pipe' &&
      def.in &&
      (def.in._zod.def as { type: string }).type !== 'string'
    )
      current = def.in;
    else return current;
  }
  return current;
}
