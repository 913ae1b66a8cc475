import { describe, expect, it } from 'vitest';
import { codeBlocks, shellCommands } from '../support/markdown-code.ts';

describe('reading the code a markdown page shows', () => {
  it('takes each line of a sh block as a command, with the "# →" lines under it as its output', () => {
    const page = [
      '# Title',
      '',
      '```sh',
      '# a comment, not a command',
      'npm run check-config',
      '# → POLLERS ok: orders',
      '',
      'npm start',
      '```',
      '',
      '````md',
      '```sh',
      'not a command: inside another block',
      '```',
      '````',
      '',
      '```toml',
      'cron = "* * * * *"',
      '```',
    ].join('\n');
    expect(shellCommands(page)).toEqual([
      { command: 'npm run check-config', prints: ['POLLERS ok: orders'], line: 3 },
      { command: 'npm start', prints: [], line: 3 },
    ]);
    expect(codeBlocks(page).map(({ lang, line }) => [lang, line])).toEqual([
      ['sh', 3],
      ['md', 11],
      ['toml', 17],
    ]);
  });

  it('refuses output promised by no command, a continued command, and a block left open', () => {
    expect(() => shellCommands('```sh\n# → ok\n```\n')).toThrow('promises output of no command');
    expect(() => shellCommands('```sh\nnpm run a \\\n  --b\n```\n')).toThrow('continued');
    expect(() => codeBlocks('```sh\nnpm start\n')).toThrow('never closes');
  });
});
