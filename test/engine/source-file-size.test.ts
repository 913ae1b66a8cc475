import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The project's rule: one concept a file, none over this many lines (docs/development.md). */
const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('source files stay small', () => {
  it('no src file is over 400 lines', () => {
    const over = sourceFiles('src')
      .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
      .filter((file) => file.lines > MAX_LINES)
      .map((file) => `${file.path}: ${file.lines} lines`);
    expect(over).toEqual([]);
  });
});
