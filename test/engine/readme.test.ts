import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import configuration from '../../docs/configuration.md?raw';
import readme from '../../README.md?raw';
import { describeRun } from '../../scripts/dev-output.ts';
import { headings, links, slug } from '../support/markdown-links.ts';
import { markdownSection } from '../support/markdown-table.ts';

/** Every page in docs/, as `docs/<name>.md`. */
const pages = readdirSync('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);

/** A page `npm run sim` or `npm run bench` writes says so under its title, and is left as written. */
const generated = (text: string) => /^Produced by `npm run /.test(text.split('\n')[2] ?? '');

describe('README', () => {
  it('opens with a contents list that names every section, each entry leading to one', () => {
    const contents = markdownSection(readme, '## Contents');
    const sections = headings(readme).filter(
      ({ level, title }) => level >= 2 && level <= 3 && title !== 'Contents',
    );
    const entries = [...contents.matchAll(/^( *)- \[(.+)\]\(#(.+)\)$/gm)].map((match) => ({
      level: (match[1] ?? '').length === 0 ? 2 : 3,
      title: match[2] ?? '',
      anchor: match[3] ?? '',
    }));
    expect(entries.map(({ level, title }) => ({ level, title }))).toEqual(sections);
    for (const entry of entries) expect(entry.anchor).toBe(slug(entry.title));
  });

  it('leads to every page in docs/ (the delivery rules are docs/semantics.md)', () => {
    const linked = new Set(links(readme).map(({ target }) => target.replace(/#.*$/, '')));
    expect(pages).toContain('docs/semantics.md');
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
    expect(readme).not.toMatch(/(?<!docs\/)SEMANTICS\.md/);
  });

  it('is led back to from the top of every docs page that is not generated', () => {
    const written = pages.filter((page) => !generated(readFileSync(page, 'utf8')));
    expect(written).toContain('docs/delivery.md');
    for (const page of written) {
      const [title = '', blank, back = ''] = readFileSync(page, 'utf8').split('\n');
      expect(title, page).toMatch(/^# \S/);
      expect(blank, page).toBe('');
      expect(back, page).toContain('](../README.md)');
    }
    const left = pages.filter((page) => !written.includes(page));
    expect(left).toEqual(expect.arrayContaining(['docs/benchmarks.md', 'docs/simulation.md']));
  });

  it("shows npm start's run lines, a failed run among them, exactly as npm start prints them", () => {
    const lines = readme.split('\n').filter((line) => line.startsWith('run  '));
    const pattern =
      /^run {2}(\S+) +(\S+) +records +(\d+) {2}checkpoint (\S+) {2}lag (\d+)s(?: {2}\((.*)\))?$/;
    const runs = lines.map((line) => {
      const [, poller, outcome, records, checkpoint, lag, error] = pattern.exec(line) ?? [];
      expect(poller, line).toBeDefined();
      const now = Date.parse(checkpoint ?? '') + Number(lag) * 1000;
      const logged = { poller, outcome, records: Number(records), checkpoint, error };
      expect(describeRun(logged, now)).toBe(line);
      return logged;
    });
    expect(runs.map((run) => run.outcome)).toContain('failed');
    const failed = runs.findIndex((run) => run.outcome === 'failed');
    // A failed run leaves the checkpoint where the run before it put it.
    expect(runs[failed]?.checkpoint).toBe(runs[failed - 1]?.checkpoint);
    expect(readme).toContain('The third run **failed**');
  });

  it('shows the example poller of docs/configuration.md as it is there', () => {
    const example = /```toml\n[\s\S]*?\n```/.exec(readme)?.[0];
    expect(example).toContain('[vars.POLLERS.sessions]');
    expect(configuration).toContain(example);
  });
});
