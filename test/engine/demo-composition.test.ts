import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The relative modules `file` imports or re-exports (static and dynamic), resolved from src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
  ].map((match) => match[1] ?? '');
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => normalize(join(dirname(file), specifier)));
}

// The Worker's entry composes the demo; env.d.ts declares the Worker's bindings, the demo's
// Durable Object namespace among them (a type, not a wiring).
const MAY_KNOW_THE_DEMO = new Set(['src/index.ts', 'src/env.d.ts']);

describe('the built-in demo', () => {
  it("is known only to the Worker's entry: no production module imports src/demo/", () => {
    const knowing = sources('src')
      .filter((file) => !file.startsWith('src/demo/') && !MAY_KNOW_THE_DEMO.has(file))
      .flatMap((file) =>
        importsOf(file)
          .filter((target) => target.startsWith('src/demo/'))
          .map((target) => `${file} imports ${target}`),
      );
    expect(knowing).toEqual([]);
  });

  it("is composed into the app and the handler registry by the Worker's entry", async () => {
    const { app } = await import('../../src/http/app.ts');
    const { handlers } = await import('../../src/handlers/index.ts');
    const demoPaths = () => app.routes.filter((route) => route.path.startsWith('/demo/'));
    // Production modules alone: no demo.
    expect(demoPaths()).toEqual([]);
    expect(handlers['demo-sessions']).toBeUndefined();
    await import('../../src/index.ts');
    expect(demoPaths().map((route) => route.path)).toContain('/demo/sessions');
    expect(handlers['demo-sessions']).toBeTypeOf('function');
  });
});
