import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('check-config --pollers names the file and the key of a poller file that is wrong', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pollers-'));
    writeFileSync(
      join(dir, 'tickets.toml'),
      'every = "5m"\n[source]\nurl = "https://api.example.com/t"\nfrom_param = "since"\nitems = 3\n[deliver]\ntype = "webhook"\nurl = "https://example.com/h"\nsecret = "${S}"\n',
    );
    const result = checkPollerFiles(dir);
    expect(result.errors).toEqual([expect.stringMatching(/tickets\.toml: .*source\.items/)]);
  });
});
