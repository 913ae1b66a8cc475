import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** docs/architecture.md stays true with the code: its paths exist, every table has an owner. */
const doc = readFileSync('docs/architecture.md', 'utf8');

/** Tables the migrations create (a table created and renamed counts by its final name). */
function tables(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const created = [...text.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)].map(
    (match) => match[1] ?? '',
  );
  const renamed = new Map(
    [...text.matchAll(/ALTER TABLE (\w+) RENAME TO (\w+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
  );
  return [...new Set(created.map((name) => renamed.get(name) ?? name))];
}

describe('docs/architecture.md', () => {
  it('names only paths the project has', () => {
    const paths = [...doc.matchAll(/`((?:src|test|sim)\/[\w./-]+)`/g)].map((m) => m[1] ?? '');
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !existsSync(path))).toEqual([]);
  });

  it("names an owner for every table of a poller's object and of the registry", () => {
    const owners = doc.slice(doc.indexOf('## Who owns which table'), doc.indexOf('## How a run'));
    const all = [...tables('src/poller/migrations.ts'), ...tables('src/registry/schema.ts')];
    expect(all).toContain('poller_secrets');
    expect(all.filter((table) => !owners.includes(`\`${table}\``))).toEqual([]);
  });

  it('matches what each store file says on its first line it owns (or that it owns none)', () => {
    const dir = 'src/poller/store';
    for (const file of readdirSync(dir)) {
      const first = readFileSync(`${dir}/${file}`, 'utf8').split('\n')[0] ?? '';
      expect(first, file).toMatch(/^\/\/ .*(owns|Owns)/);
    }
  });
});
