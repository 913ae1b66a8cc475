/**
 * `npm run bench:bundle`: the Worker's size as a deploy uploads it (`wrangler deploy
 * --dry-run`, minified as wrangler.toml says), gzipped, and what it is made of, written into
 * docs/benchmarks.md between markers (`npm run bench` keeps the section). A size is the same
 * on every run for one lockfile: it is measured once, with no spread.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { writeFormatted } from '../sim/write-formatted.ts';

const OUT = 'dist/bundle';
const DOC = 'docs/benchmarks.md';
const START = '<!-- bundle:start -->';
const END = '<!-- bundle:end -->';
/** The size #24 asks the bundle to stay under. */
const TARGET_KIB = 400;

rmSync(OUT, { recursive: true, force: true });
const build = spawnSync(
  'node_modules/.bin/wrangler',
  ['deploy', '--dry-run', '--outdir', OUT, '--metafile', `${OUT}/meta.json`],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
if (build.status !== 0) throw new Error('wrangler could not bundle the Worker');

const code = readFileSync(`${OUT}/index.js`);
const kib = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;
const total = kib(code.length);
const gzipped = kib(gzipSync(code).length);

type Meta = { outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }> };
const meta = JSON.parse(readFileSync(`${OUT}/meta.json`, 'utf8')) as Meta;
const output = Object.entries(meta.outputs).find(([path]) => path.endsWith('index.js'))?.[1];
if (output === undefined) throw new Error('no index.js in the metafile');

/** `node_modules/zod/v4/locales/he.js` → `zod (v4/locales)`; `src/http/app.ts` → `src/http`. */
function partOf(path: string): string {
  const inModules = path.split('node_modules/').at(-1) ?? path;
  if (inModules === path) return path.split('/').slice(0, 2).join('/');
  const segments = inModules.split('/');
  const name = segments[0]?.startsWith('@') ? segments.slice(0, 2).join('/') : segments[0];
  const rest = segments.slice(name?.startsWith('@') ? 2 : 1);
  return name === 'zod' ? `zod (${rest.slice(0, 2).join('/')})` : (name ?? path);
}

const parts = new Map<string, number>();
for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
  const part = partOf(path);
  parts.set(part, (parts.get(part) ?? 0) + bytesInOutput);
}
const rows = [...parts.entries()]
  .sort((a, b) => b[1] - a[1])
  .filter(([, bytes]) => bytes >= 1024)
  .map(([part, bytes]) => `| ${part} | ${kib(bytes)} KiB |`)
  .join('\n');

const section = `${START}
## The Worker's bundle

Produced by \`npm run bench:bundle\` on ${new Date().toISOString().slice(0, 10)}: the Worker as
\`wrangler deploy --dry-run\` bundles it (\`minify = true\` in wrangler.toml). A size is the
same on every run for one lockfile, so it is measured once.

| | size |
| --- | --- |
| uploaded (minified) | ${total} KiB (target: under ${TARGET_KIB} KiB: ${total < TARGET_KIB ? 'met' : 'not met'}) |
| gzipped | ${gzipped} KiB |

What it is made of (each part's minified bytes, parts of at least 1 KiB):

| part | size |
| --- | --- |
${rows}
${END}`;

const existing = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
const marked = new RegExp(`${START}[\\s\\S]*?${END}`);
writeFormatted(
  DOC,
  marked.test(existing)
    ? existing.replace(marked, section)
    : `${existing.trimEnd()}\n\n${section}\n`,
);
console.log(`${total} KiB minified, ${gzipped} KiB gzipped: wrote ${DOC}`);
