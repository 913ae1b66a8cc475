import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import readme from '../../README.md?raw';

/** The headings of a markdown text outside code blocks: level and title. */
function headings(text: string): { level: number; title: string }[] {
  let code = false;
  return text.split('\n').flatMap((line) => {
    if (line.startsWith('```')) code = !code;
    const match = code ? null : /^(#{2,3}) (.+)$/.exec(line);
    return match?.[1] && match[2] ? [{ level: match[1].length, title: match[2] }] : [];
  });
}

/** GitHub's anchor for a heading. */
function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-');
}

const contents = readme.slice(readme.indexOf('## Contents'), readme.indexOf('## Quick start'));

describe('README', () => {
  it('opens with a contents list that names every section, each entry leading to one', () => {
    expect(readme.indexOf('## Contents')).toBeGreaterThan(0);
    const sections = headings(readme).filter(({ title }) => title !== 'Contents');
    const entries = [...contents.matchAll(/^( *)- \[(.+)\]\(#(.+)\)$/gm)].map((match) => ({
      level: (match[1] ?? '').length === 0 ? 2 : 3,
      title: match[2] ?? '',
      anchor: match[3] ?? '',
    }));
    expect(entries.map(({ level, title }) => ({ level, title }))).toEqual(sections);
    for (const entry of entries) expect(entry.anchor).toBe(anchor(entry.title.replaceAll('`', '')));
  });

  it('links only to files the project has (the delivery rules are docs/semantics.md)', () => {
    const links = [...readme.matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)].map((match) => match[1] ?? '');
    expect(links).toContain('docs/semantics.md');
    for (const link of links) expect(existsSync(link), link).toBe(true);
    expect(readme).not.toMatch(/(?<!docs\/)SEMANTICS\.md/);
  });
});
