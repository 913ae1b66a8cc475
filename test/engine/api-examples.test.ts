import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkPollerFiles } from '../../scripts/check-config.ts';
import { VENDOR_CASES } from '../workers/vendors/index.ts';

describe('examples/apis/', () => {
  it('has a fake of its vendor for every example, run in workerd by test/workers/examples.test.ts', () => {
    const files = readdirSync('examples/apis').filter((file) => file.endsWith('.toml'));
    expect(files.sort()).toEqual(Object.keys(VENDOR_CASES).sort());
  });

  it('passes check-config, with no error and no warning', () => {
    const result = checkPollerFiles('examples/apis');
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.pollers.length).toBe(Object.keys(VENDOR_CASES).length);
  });
});
