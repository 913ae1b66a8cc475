import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import configuration from '../../docs/configuration.md?raw';
import { pollerSchema } from '../../src/config/schema.ts';
import { markdownSection, tableRows } from '../support/markdown-table.ts';

type JsonSchema = {
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
};

/**
 * Every key path a poller's config may hold (`source.next.param`, `deliver.timeout`), read
 * from the schema as it runs (its JSON Schema), not from how src/config lays it out: an
 * object with fixed keys contributes its keys, never itself; a union (the `type` variants of
 * `source.next` and `deliver`) contributes every variant's keys; anything else (a string,
 * a duration, a record such as `labels` or `source.headers`) is a key.
 */
function configKeys(): string[] {
  const root = z.toJSONSchema(pollerSchema, {
    io: 'input', // a duration is a string as written, not the number it becomes
    unrepresentable: 'any',
  }) as JsonSchema;
  const keys = new Set<string>();
  const resolve = (node: JsonSchema): JsonSchema => {
    if (node.$ref === undefined) return node;
    if (node.$ref === '#') return root;
    const name = /^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1];
    const target = name === undefined ? undefined : root.$defs?.[name];
    if (target === undefined) throw new Error(`cannot follow ${node.$ref}`);
    return resolve(target);
  };
  const walk = (node: JsonSchema, path: string[], seen: Set<JsonSchema>): void => {
    const schema = resolve(node);
    if (seen.has(schema)) return; // a recursive schema: its keys are already walked
    const inner = new Set(seen).add(schema);
    const variants = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
    for (const variant of variants) walk(variant, path, inner);
    if (schema.properties !== undefined) {
      for (const [key, child] of Object.entries(schema.properties)) {
        walk(child, [...path, key], inner);
      }
    } else if (variants.length === 0 && path.length > 0) {
      keys.add(path.join('.'));
    }
  };
  walk(root, [], new Set());
  return [...keys];
}

/**
 * The keys the "Every key" table of docs/configuration.md documents. A row is recognised by its first cell,
 * which must be exactly one backticked dotted key path (`source.next.param`); any other first
 * cell in the table's body is an error, so a mistyped row cannot hide.
 */
function documentedKeys(): string[] {
  const section = markdownSection(configuration, '## Every key');
  const rows = tableRows(section);
  expect(rows.length, 'the "Every key" section holds a table').toBeGreaterThan(0);
  return rows.map((cells) => {
    const key = /^`([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)`$/.exec(cells[0] ?? '')?.[1];
    if (key === undefined) {
      throw new Error(
        `docs/configuration.md "Every key": a row's first cell must be one \`key.path\`: ${cells[0]}`,
      );
    }
    return key;
  });
}

describe('docs/configuration.md: a row for every config key', () => {
  const keys = configKeys();
  const documented = documentedKeys();

  it('reads the keys from the schema itself: top level, source, every variant of next and deliver', () => {
    // If the walk breaks (a zod change), it must not pass by finding nothing.
    for (const key of [
      'cron',
      'labels',
      'source.url',
      'source.headers',
      'source.next.type',
      'source.next.param',
      'source.next.more',
      'deliver.type',
      'deliver.secret', // webhook only
      'deliver.binding', // queue only
      'deliver.name', // queue and handler
    ]) {
      expect(keys).toContain(key);
    }
    expect(keys).not.toContain('source'); // an object with fixed keys is its keys
    expect(keys).not.toContain('labels.tenant'); // a record is one key
  });

  it('has a row for every key of the poller config', () => {
    const missing = keys.filter((key) => !documented.includes(key));
    expect(missing, 'config keys without a row in the "Every key" table').toEqual([]);
  });

  it('has no row for a key the config does not take, and none twice', () => {
    const stale = documented.filter((key) => !keys.includes(key));
    expect(stale, 'rows of the "Every key" table that are not config keys').toEqual([]);
    expect(documented.filter((key, i) => documented.indexOf(key) !== i)).toEqual([]);
  });
});
