import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { brokenLinks, headingAnchors, links, slug } from '../support/markdown-links.ts';

/** The README and every page in docs/: the documentation a reader follows links through. */
const PAGES = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

describe('links between the README and docs/', () => {
  it.each(PAGES)(
    '%s: every relative link leads to a file, and every #anchor to a heading of it',
    (page) => {
      expect(brokenLinks(page)).toEqual([]);
    },
  );

  it('finds the links it checks: the README leads into docs/, with anchors', () => {
    const targets = links(readFileSync('README.md', 'utf8')).map(({ target }) => target);
    expect(targets.filter((target) => target.startsWith('docs/')).length).toBeGreaterThan(10);
    expect(targets.some((target) => /^docs\/[\w-]+\.md#[\w-]+$/.test(target))).toBe(true);
    expect(targets.some((target) => target.startsWith('#'))).toBe(true);
  });

  it("makes GitHub's anchors: lowercase, punctuation and backticks gone, spaces as hyphens", () => {
    expect(slug('Choosing `lag_allowance`')).toBe('choosing-lag_allowance');
    expect(slug("The OAuth 2.0 token's life")).toBe('the-oauth-20-tokens-life');
    expect(slug('Fleet: runtime pollers')).toBe('fleet-runtime-pollers');
    expect(slug('Evidence: a fault simulation against naive pollers')).toBe(
      'evidence-a-fault-simulation-against-naive-pollers',
    );
    expect(slug('Two  spaces - and a hyphen')).toBe('two--spaces---and-a-hyphen');
    const text = '# Queue\n\n## Queue\n\n```sh\n# Queue\n```\n\n### Queue\n\n## Queue 1\n';
    expect([...headingAnchors(text)]).toEqual(['queue', 'queue-1', 'queue-2', 'queue-1-1']);
  });

  it('reports a missing file, a missing anchor, a missing same-page anchor; not URLs or code', () => {
    const files: Record<string, string> = {
      'README.md': [
        '# Title',
        '',
        '## Dead letters',
        '',
        'See [the guide](docs/guide.md#every-key) and [dead letters](#dead-letters).',
        'Broken: [gone](docs/gone.md), [no key](docs/guide.md#no-such-key),',
        '[no section](#no-such-section) and ![no chart](docs/chart.svg).',
        'Not checked: [a site](https://example.com/x#y), `[code](docs/code.md)`,',
        '',
        '```md',
        '[fenced](docs/fenced.md)',
        '```',
      ].join('\n'),
      'docs/guide.md': '# Guide\n\n[Back](../README.md#title)\n\n## Every key\n',
    };
    expect(brokenLinks('README.md', (path) => files[path])).toEqual([
      'README.md:6: docs/gone.md: no file docs/gone.md',
      'README.md:6: docs/guide.md#no-such-key: no heading #no-such-key in docs/guide.md',
      'README.md:7: #no-such-section: no heading #no-such-section in README.md',
      'README.md:7: docs/chart.svg: no file docs/chart.svg',
    ]);
    expect(brokenLinks('docs/guide.md', (path) => files[path])).toEqual([]);
  });
});
