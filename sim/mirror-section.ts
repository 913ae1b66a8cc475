import {
  MIRROR_INTERVAL_MS,
  MIRROR_VARIANTS,
  type MirrorResult,
  type MirrorScenario,
  type MirrorVariant,
  RECONCILE_EVERY_MS,
  RECONCILE_SLACK_TICKS,
  simulateMirror,
} from './mirror.ts';
import { mirrorChart, mirrorTable } from './report.ts';

/** The mirror scenarios' part of docs/simulation.md, its chart, and what failed to hold. */
export interface MirrorSection {
  markdown: string;
  svg: string | null;
  problems: string[];
}

const minutes = (ms: number) => (ms / 60_000).toFixed(1);

/**
 * Runs the mirror scenarios over `seeds` and writes their section. What must hold: no way of
 * keeping the mirror ever deletes a record the upstream still has; with the listing compared
 * by content, the mirror converges in every seed, and where nothing fails and no listing is
 * empty, within one period of the last change (plus the ticks a listing waits for); where
 * nothing crashes, the empty listing's deletes are held.
 */
export async function mirrorSection(
  scenarios: MirrorScenario[],
  seeds: number[],
  svgName: string,
): Promise<MirrorSection> {
  const problems: string[] = [];
  const tables: string[] = [];
  const byScenario = new Map<string, Map<string, MirrorResult[]>>();
  let svg: string | null = null;
  let traced = false;
  for (const scenario of scenarios) {
    const rows: { label: string; results: MirrorResult[] }[] = [];
    const byVariant = new Map<string, MirrorResult[]>();
    const bound = RECONCILE_EVERY_MS + RECONCILE_SLACK_TICKS * scenario.faults.intervalMs;
    for (const variant of MIRROR_VARIANTS) {
      const results: MirrorResult[] = [];
      for (const seed of seeds) results.push(await simulateMirror(variant, seed, scenario.faults));
      rows.push({ label: variant.label, results });
      byVariant.set(variant.name, results);
      for (const result of results) {
        const where = `${scenario.name}, ${variant.name}, seed ${result.seed}`;
        const found = checks(result, variant, scenario.withinPeriod ? bound : null, scenario);
        problems.push(...found.map((problem) => `${where}: ${problem}`));
        if (found.length > 0 && !traced) {
          traced = true;
          console.error(`${where}:\n${result.trace.slice(-60).join('\n')}`);
        }
      }
    }
    byScenario.set(scenario.name, byVariant);
    const section = `### ${scenario.name}\n\n${scenario.what}. ${describe(scenario, rows[0]?.results ?? [], seeds.length)}\n\n${mirrorTable(rows)}\n`;
    tables.push(section);
    console.log(section);
    if (svg === null) {
      const colors: Record<string, string> = {
        'no-listing': '#d9480f',
        reconcile: '#2b8a3e',
        'reconcile-by-updated-at': '#1c7ed6',
      };
      const lines = MIRROR_VARIANTS.flatMap((variant, index) => {
        const color = colors[variant.name];
        const series = rows[index]?.results[0]?.wrongOverTime;
        return color && series ? [{ label: variant.label.replaceAll('`', ''), color, series }] : [];
      });
      svg = mirrorChart(
        lines,
        rows[0]?.results[0]?.lastChangeMs ?? 0,
        `${scenario.name}, seed ${seeds[0]}: records the mirror has wrong, at each cron tick`,
      );
    }
  }
  const markdown = `## Deletes and silent changes: keeping a mirror

The loss scenarios count deliveries. Here what counts is what a receiver ends up holding: a
mirror of the upstream (id → record) kept from the deliveries, each \`op\` applied only when
its \`version\` is not older than what the mirror holds for that id (the delivery docs' advice to
receivers, [Deletes](delivery.md#deletes)). This upstream holds records, not a log of
versions, and is read through three endpoints, each paged by a stable keyset cursor and each
showing a change up to 10 s after it happened:

- the stream ("changed since"): every record whose \`updated_at\` is in the window, as it is
  now, tombstones included (a soft delete sets \`deleted_at\` and moves \`updated_at\`;
  \`source.deleted = { path = "deleted_at" }\`);
- the deletions endpoint (\`source.deletions\`): \`{ id, deleted_at }\` for the hard deletes it
  logs;
- the listing (\`reconcile.url\`): every live record, whole, by id; soft-deleted ones are left
  out.

Each way of keeping the mirror is tidemark's engine, run every minute with
\`lag_allowance = "11s"\`, tombstones and the deletions stream; they differ in the listing:
(a) none, as a design without reconciliation; (b) \`reconcile = { every = "30m",
updated_at = "updated_at", compare = "content" }\` (and the default \`max_deletes = "10%"\`);
(c) as (b), but the second listing answers one empty, complete page; (d) as (b) with the
default \`compare = "updated_at"\`, where a listed record counts as changed only if its
\`updated_at\` moved.

- **ghosts**, **stale**, **missing**: at the end, after the quiet minutes: records the mirror
  has that the upstream deleted, has with other content, and lacks.
- **converged**: the mirror equals the upstream at the end; **last change → converged**: from
  the upstream's last change to the last delivery that changed the mirror.
- **longest a record stayed wrong**: from a record's latest change until the mirror had it
  right (checked at every cron tick); "never put right" when some record still was not at the end.
- **false deletes**: deletes delivered for a record the upstream had, live, at that moment.
- **listings held**: complete listings whose deletes were more than \`max_deletes\`, and held.

${tables.join('\n')}
![records the mirror has wrong over time](${svgName})

${findings(byScenario, seeds.length)}
`;
  return { markdown, svg, problems };
}

/** The scenario's sentence: its changes, on average per seed (the same world for every variant). */
function describe(scenario: MirrorScenario, results: MirrorResult[], seeds: number): string {
  const { faults } = scenario;
  const mean = (pick: (result: MirrorResult) => number) =>
    Math.round(results.reduce((sum, result) => sum + pick(result), 0) / Math.max(1, seeds));
  return `${seeds} seeds: ${faults.initialRecords} records created in the first ${faults.seedTicks} minutes, then ${faults.ticks}–${faults.ticks + faults.ticksJitter} minutes of changes (per seed on average: ${mean((r) => r.changes.update)} updates, ${mean((r) => r.changes.create) - faults.initialRecords} creates, ${mean((r) => r.changes.silent)} silent changes, where the content changes and \`updated_at\` does not, ${mean((r) => r.changes['soft-delete'])} soft deletes, ${mean((r) => r.changes['logged-delete'])} hard deletes the deletions endpoint lists and ${mean((r) => r.changes['unlogged-delete'])} that nothing shows), then ${faults.drainTicks} quiet minutes.`;
}

/** What the tables show, with their figures, and what holds by construction. */
function findings(byScenario: Map<string, Map<string, MirrorResult[]>>, seeds: number): string {
  const clean = byScenario.get('mirror');
  const faulty = byScenario.get('mirror-faults');
  const sum = (results: MirrorResult[] | undefined, pick: (result: MirrorResult) => number) =>
    (results ?? []).reduce((total, result) => total + pick(result), 0);
  const most = (results: MirrorResult[] | undefined, pick: (result: MirrorResult) => number) =>
    minutes(Math.max(0, ...(results ?? []).map(pick)));
  const lines: string[] = ['What it shows:', ''];
  const bound = RECONCILE_EVERY_MS + RECONCILE_SLACK_TICKS * MIRROR_INTERVAL_MS;
  if (clean) {
    const naive = clean.get('no-listing');
    const ours = clean.get('reconcile');
    const empty = clean.get('reconcile-empty-once');
    const byDate = clean.get('reconcile-by-updated-at');
    lines.push(
      `- (a) never converges: every hard delete nothing logs stays in the mirror as a ghost, and every silent change stays stale unless a later update overwrites it (${sum(naive, (r) => r.ghosts)} ghosts and ${sum(naive, (r) => r.stale)} stale records at the end of ${seeds} seeds). By construction: nothing (a) reads will ever mention them again, so "never" is not only to the end of the run.`,
      `- (b) converges in every seed, at most ${most(ours, (r) => r.convergedAfterMs ?? 0)} min after the upstream's last change, and no record stays wrong longer than ${most(ours, (r) => r.longestWrongMs)} min: one period (\`every = "30m"\`), plus the cron tick a listing waits for (it starts in the first run after it is due) and the seconds it takes.`,
      `- (c): the empty listing would delete every record. Its deletes are held instead, and the next complete listing, which finds the real deletes and not the held ones, replaces them: ${sum(empty, (r) => r.falseDeletes)} false deletes in ${seeds} seeds. ${emptyConvergence(empty ?? [], bound)}`,
      `- (d) finds the hard deletes but none of the silent changes (${sum(byDate, (r) => r.stale)} stale records at the end): their \`updated_at\` did not move, and only comparing content (\`compare = "content"\`) sees them.`,
    );
  }
  if (faulty) {
    const ours = faulty.get('reconcile');
    lines.push(
      `- With failures (mirror-faults): a run that fails on a stream ends before the listing's turn, so failing runs put listings off, and a record can stay wrong for up to ${most(ours, (r) => r.longestWrongMs)} min; still every seed converges (at most ${most(ours, (r) => r.convergedAfterMs ?? 0)} min after the last change) and no variant deletes a record the upstream has (${sum([...faulty.values()].flat(), (r) => r.falseDeletes)} false deletes).`,
    );
  }
  lines.push(
    '',
    'What holds by construction, not shown:',
    '',
    '- The listing is complete and consistent: a keyset cursor over ids, so every live record is on some page. A listing paged by offset over records deleted between its pages can skip a live record; a delete is delivered only once confirmed (by `reconcile.fetch`, or by the next listing lacking it too), and the next listing shows the skipped record. Not simulated here.',
    "- Silent changes are found because the listing returns whole records, hashed as the stream's records were: a listing of ids only, or of other fields, cannot find them.",
    "- The receiver applies an `op` only when its version is not older than what it holds, and a reconciliation's delete is versioned by the version last delivered of its id, so the record comes back if a later listing shows it again.",
  );
  return lines.join('\n');
}

/**
 * How the run with an empty listing converged: like (b), within a period of the last change;
 * or later, where the deletes the next listing found (a hold keeps a period's deletes back,
 * so it finds two periods' worth) were more than max_deletes and were held in turn, until two
 * listings agreed.
 */
function emptyConvergence(results: MirrorResult[], bound: number): string {
  const held = results.reduce((sum, result) => sum + result.held, 0);
  const latest = Math.max(0, ...results.map((result) => result.convergedAfterMs ?? 0));
  const late = results.filter((result) => (result.convergedAfterMs ?? 0) > bound);
  const all = results.every((result) => result.convergedAfterMs !== null);
  const converges = all ? 'It converges in every seed' : 'It does not converge in every seed';
  if (late.length === 0)
    return `${converges}, like (b): at most ${minutes(latest)} min after the last change (${held} listings held in all).`;
  const longest = Math.max(0, ...results.map((result) => result.longestWrongMs));
  return `${converges}, but not always within a period: in ${late.length} of ${results.length} seeds the next listing found more real deletes than \`max_deletes\` (after a hold it finds two periods' worth), held them too, and they went out only when two listings found the same ones (${held} listings held in all; converged at most ${minutes(latest)} min after the last change; a record stayed wrong up to ${minutes(longest)} min).`;
}

/** What must hold of one run. */
function checks(
  result: MirrorResult,
  variant: MirrorVariant,
  bound: number | null,
  scenario: MirrorScenario,
): string[] {
  const problems: string[] = [];
  if (result.falseDeletes > 0)
    problems.push(`false deletes: ${result.falseDeleteSample.join(', ')}`);
  if (variant.compare !== 'content') return problems;
  if (result.convergedAfterMs === null) {
    problems.push(
      `never converged (${result.ghosts} ghosts, ${result.stale} stale, ${result.missing} missing)`,
    );
  } else if (
    bound !== null &&
    variant.emptyListing === undefined &&
    result.convergedAfterMs > bound
  ) {
    problems.push(
      `converged ${minutes(result.convergedAfterMs)} min after the last change, past ${minutes(bound)}`,
    );
  }
  // A crash between the empty page and its storing has the listing ask again: then nothing is held.
  if (variant.emptyListing !== undefined && scenario.faults.crashRate === 0 && result.held === 0)
    problems.push("the empty listing's deletes were not held");
  return problems;
}
