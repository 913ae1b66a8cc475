import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("the fleet's questions", () => {
  it("reach the registry's object from the routes and the dashboard only through src/fleet/", () => {
    const direct = sources('src/http').filter((file) =>
      readFileSync(file, 'utf8').includes('registryOf('),
    );
    expect(direct).toEqual([]);
  });
});
