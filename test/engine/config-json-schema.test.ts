import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/json-schema.ts';

const published = () =>
  JSON.parse(readFileSync('schema/poller.schema.json', 'utf8')) as Record<string, unknown>;

type Node = { properties?: Record<string, Node>; additionalProperties?: unknown };

describe("the poller config's published JSON Schema", () => {
  it('is the schema the Worker validates with, as written by `npm run schema`', () => {
    expect(published()).toEqual(configJsonSchema());
  });

  it('refuses a key the config does not have, at the top and in source, so an editor flags a typo', () => {
    const schema = published() as Node;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.source?.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties ?? {})).toEqual(
      expect.arrayContaining(['cron', 'every', 'source', 'deliver', 'lag_allowance', 'reconcile']),
    );
  });

  it('checks a duration as it is typed', () => {
    const pattern = new RegExp(
      String(
        (published() as { properties: Record<string, { pattern?: string }> }).properties
          .lag_allowance?.pattern,
      ),
    );
    expect(['30s', '1.5m', '500ms', '7d'].every((text) => pattern.test(text))).toBe(true);
    expect(['30', '5 minutes', 's'].some((text) => pattern.test(text))).toBe(false);
  });
});
