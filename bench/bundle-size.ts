/**
 * `npm run bench:bundle`: the Worker's size as a deploy uploads it (`wrangler deploy
 * --dry-run`, minified as wrangler.toml says), gzipped, what it is made of, and its startup
 * time as `wrangler check startup` profiles it locally, written into docs/benchmarks.md
 * between markers (`npm run bench` keeps the section). A size is the same on every run for
 * one lockfile: it is measured once, with no spread; the startup is a time on this machine,
 * repeated.
 *
 *   npm run bench:bundle                          # 5 startup runs (about 30 s)
 *   npm run bench:bundle -- --startup-runs 1 --no-write
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { writeFormatted } from '../sim/write-formatted.ts';
import { type CpuProfile, startupActiveMs } from './startup-profile.ts';
import { showSpread, spread } from './stats.ts';

const { values } = parseArgs({
  options: {
    'startup-runs': { type: 'string', default: '5' },
    'no-write': { type: 'boolean', default: false },
  },
});
const STARTUP_RUNS = Number(values['startup-runs']);

const OUT = 'dist/bundle';
const DOC = 'docs/benchmarks.md';
const START = '<!-- bundle:start -->';
const END = '<!-- bundle:end -->';
/**
 * The uploaded size the bundle stays at or under. The platform takes far larger Workers;
 * what a larger bundle costs is startup time (its limit: 1 s of global scope), which the
 * section reports beside it.
 */
const TARGET_KIB = 1024;

rmSync(OUT, { recursive: true, force: true });
const build = spawnSync(
  'node_modules/.bin/wrangler',
  [
    'deploy',
    '--dry-run',
    '--outdir',
    OUT,
    '--metafile',
    `${OUT}/meta.json`,
    // The upload as wrangler would send it, for `wrangler check startup`.
    '--outfile',
    `${OUT}/worker.bundle`,
  ],
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

/** `wrangler check startup` on the built upload, `runs` times: each run's active ms, or why not. */
function startupRuns(runs: number): number[] | string {
  const active: number[] = [];
  for (let run = 1; run <= runs; run += 1) {
    const profile = `${OUT}/startup-${run}.cpuprofile`;
    const check = spawnSync(
      'node_modules/.bin/wrangler',
      ['check', 'startup', '--worker', `${OUT}/worker.bundle`, '--outfile', profile],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (check.status !== 0 || !existsSync(profile)) {
      return `wrangler check startup failed: ${check.stderr.trim().split('\n').at(-1) ?? check.status}`;
    }
    active.push(startupActiveMs(JSON.parse(readFileSync(profile, 'utf8')) as CpuProfile));
  }
  return active;
}

const load = loadavg()[0] ?? 0;
const startup = startupRuns(STARTUP_RUNS);
const startupCell =
  typeof startup === 'string'
    ? `not measured (${startup})`
    : `${showSpread(spread(startup), (n) => `${n.toFixed(1)} ms`)} (${startup.length} runs; Cloudflare's limit: 1 s)`;

const section = `${START}
## The Worker's bundle

Produced by \`npm run bench:bundle\` on ${new Date().toISOString().slice(0, 10)}: the Worker as
\`wrangler deploy --dry-run\` bundles it (\`minify = true\` in wrangler.toml). A size is the
same on every run for one lockfile, so it is measured once.

| | measured |
| --- | --- |
| uploaded (minified) | ${total} KiB (target: at most ${TARGET_KIB / 1024} MiB: ${total <= TARGET_KIB ? 'met' : '**not met**'}) |
| gzipped | ${gzipped} KiB |
| startup (global scope), active CPU on this machine | ${startupCell} |

The size target is at most 1 MiB uploaded: the platform takes far larger Workers, and what
a larger bundle costs is the time its global scope takes to run at each cold start, limited
to 1 s (https://developers.cloudflare.com/workers/platform/limits/#worker-startup-time).
The startup row is \`wrangler check startup\`: the upload evaluated in a local workerd under
the V8 profiler, the sampled time less idle ("Active", garbage collection included), on this
machine (${cpus().length} cores, load average ${load.toFixed(1)} when measured: others' work slows it). The
"Worker Startup Time" wrangler prints on \`deploy\` or \`versions upload\` is Cloudflare's
figure for the upload, on its machines; it cannot be measured offline, and is not here.

What it is made of (each part's minified bytes, parts of at least 1 KiB):

| part | size |
| --- | --- |
${rows}
${END}`;

if (values['no-write']) {
  console.log(section);
  process.exit(0);
}
const existing = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
const marked = new RegExp(`${START}[\\s\\S]*?${END}`);
writeFormatted(
  DOC,
  marked.test(existing)
    ? existing.replace(marked, section)
    : `${existing.trimEnd()}\n\n${section}\n`,
);
console.log(`${total} KiB minified, ${gzipped} KiB gzipped, startup ${startupCell}: wrote ${DOC}`);
