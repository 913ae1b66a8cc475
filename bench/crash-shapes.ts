/**
 * Redeliveries per crash mid-round and mid-children: the worlds of the crash sweeps
 * (test/support/crash-worlds.ts: the real engine over the in-memory store, HttpSource over
 * the Google Calendar sync fake and the Jira-like tracker) at a bench's size, each killed at
 * seeded random delivery requests of one run (as bench/crash.ts does), recovered at the
 * lease's expiry and run until nothing is left. Counted per crash: what the receiver got
 * more than once, the upstream requests more than the same script without a crash, and any
 * record the receiver ends without.
 */

import { seeded } from './crash.ts';
import { meets, type Spread, showSpread, spread, thousands } from './stats.ts';

/** A crash point: the n-th delivery request of the run that dies. */
interface DeliveryPoint {
  kind: 'delivery';
  index: number;
}

/** A trial's figures (test/support/crash-sweep.ts Trial). */
interface TrialFigures {
  crashed: boolean;
  redeliveries: number;
  lost: string[];
  requests: number;
  passed: { delivery: number };
}

/** A world of the sweeps, opaque here. */
type World = object;

/** How records go out (test/support/crash-worlds.ts Delivery). */
interface Delivery {
  batch: number;
  concurrency: number;
}

/**
 * What the bench uses of the sweeps. They run HttpSource, whose types are workerd's (its body
 * reader's `readAtLeast`): they are type-checked with the Worker's types (tsconfig.json, by
 * test/engine/crash-sweeps.test.ts, which hands them to `shapeRedeliveries` as this), and the
 * bench loads them by a path the scripts' check does not follow (`loadSweeps`).
 */
export interface Sweeps {
  crashTrial(
    make: () => World,
    point: DeliveryPoint | null,
    options: { pageMs: number },
  ): Promise<TrialFigures>;
  roundWorld(shape: { start: 'token'; events: number; page: number }, delivery: Delivery): World;
  childrenWorld(
    shape: {
      issues: number;
      comments: number;
      page: number;
      searchPage: number;
      deletes: boolean;
      deliverParents: boolean;
    },
    delivery: Delivery,
  ): World;
}

/** The sweeps' modules, for the bench (see Sweeps). */
export async function loadSweeps(): Promise<Sweeps> {
  const at = (path: string) => new URL(path, import.meta.url).href;
  const sweep = await import(at('../test/support/crash-sweep.ts'));
  const worlds = await import(at('../test/support/crash-worlds.ts'));
  return {
    crashTrial: sweep.crashTrial,
    roundWorld: worlds.roundWorld,
    childrenWorld: worlds.childrenWorld,
  };
}

export interface ShapeVariant {
  /** Where the run dies: `mid-round` or `mid-children`. */
  where: 'mid-round' | 'mid-children';
  batch: number;
  concurrency: number;
  pageMs: number;
  /** Records to a page: of the round, or of a parent's children. */
  page: number;
  /** What may go twice: the page in flight (the round's, or a child page). */
  bound: number;
  redeliveries: Spread;
  /** Upstream requests more than the same script without a crash. */
  askedAgain: Spread;
  /** Crashes after which the receiver lacked a record or held one wrongly. */
  lossy: number;
}

export interface ShapeRedeliveries {
  crashes: number;
  /** Calendar events at first (a round from a token lists about 90% of them again). */
  events: number;
  issues: number;
  comments: number;
  variants: ShapeVariant[];
}

const PAGE = 100;

/**
 * `crashes` crashes of each variant: a round from a token over `events` events (pages of
 * 100), and a window of `issues` changed issues and a new one, of `comments` comments each
 * (child pages of 100, children.deletes on).
 */
export async function shapeRedeliveries(
  sweeps: Sweeps,
  crashes: number,
  size = { events: 2_000, issues: 10, comments: 300 },
): Promise<ShapeRedeliveries> {
  const variants: ShapeVariant[] = [];
  const plans: [ShapeVariant['where'], number, number, number][] = [
    ['mid-round', 1, 6, 60],
    ['mid-round', 100, 6, 60],
    ['mid-round', 1, 6, 5],
    ['mid-children', 1, 6, 60],
    ['mid-children', 1, 6, 5],
  ];
  for (const [where, batch, concurrency, pageMs] of plans) {
    const delivery = { batch, concurrency };
    const make =
      where === 'mid-round'
        ? () => sweeps.roundWorld({ start: 'token', events: size.events, page: PAGE }, delivery)
        : () =>
            sweeps.childrenWorld(
              {
                issues: size.issues,
                comments: size.comments,
                page: PAGE,
                searchPage: 5,
                deletes: true,
                deliverParents: false,
              },
              delivery,
            );
    const options = { pageMs };
    const baseline = await sweeps.crashTrial(make, null, options);
    const random = seeded(34);
    const redeliveries: number[] = [];
    const askedAgain: number[] = [];
    let lossy = 0;
    for (let crash = 0; crash < crashes; crash += 1) {
      const index = 1 + Math.floor(random() * baseline.passed.delivery);
      const trial = await sweeps.crashTrial(make, { kind: 'delivery', index }, options);
      if (!trial.crashed) throw new Error(`${where}: no delivery request ${index}`);
      redeliveries.push(trial.redeliveries);
      askedAgain.push(trial.requests - baseline.requests);
      if (trial.lost.length > 0) lossy += 1;
    }
    variants.push({
      where,
      batch,
      concurrency,
      pageMs,
      page: PAGE,
      bound: PAGE,
      redeliveries: spread(redeliveries),
      askedAgain: spread(askedAgain),
      lossy,
    });
  }
  return { crashes, ...size, variants };
}

/** The variants' rows in the targets table of docs/benchmarks.md: a crash that lost a record fails its row. */
export function shapeTargets(figures: ShapeRedeliveries) {
  return figures.variants.map(
    (v) =>
      [
        `redeliveries per crash ${v.where}, batch ${v.batch} × concurrency ${v.concurrency}, ${v.pageMs} ms a page`,
        `≤ ${v.bound}`,
        `${showSpread(v.redeliveries, String)}${v.lossy > 0 ? `; ${v.lossy} lost a record` : ''}`,
        v.lossy > 0 ? 'no' : meets(v.redeliveries, (n) => n <= v.bound),
      ] as const,
  );
}

/** The section's paragraph and table, under "Redeliveries after a crash". */
export function shapeSection(figures: ShapeRedeliveries): string {
  const rows = figures.variants.map(
    (v) =>
      `| ${v.where} | batch ${v.batch}, concurrency ${v.concurrency} | ${v.pageMs} ms | ${v.bound} | **${showSpread(v.redeliveries, thousands)}** | ${showSpread(v.askedAgain, thousands)} | ${v.lossy} |`,
  );
  return `### Mid-round and mid-children

The same, in the worlds of the crash sweeps (\`bench/crash-shapes.ts\`, over
\`test/support/crash-worlds.ts\`: HttpSource against the Google Calendar sync fake and the
Jira-like tracker). Mid-round: a round from a token over ${thousands(figures.events)} events, pages of 100,
after most of them changed (about ${thousands(figures.events * 0.9)} changes). Mid-children: a window of ${figures.issues} changed
issues and a new one, ${thousands(figures.comments)} comments each, child pages of 100, \`children.deletes\`
on. Each upstream changes again while the object is dead. ${figures.crashes} crashes per row at seeded
random delivery requests; "asked again": upstream requests more than the same script
without a crash; "lost": crashes after which the receiver lacked a record (every one is
checked against the upstream).

| crash | delivery | a page takes | bound | redeliveries per crash | asked again | lost |
| --- | --- | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}

The bound is the page in flight, however fast pages come: a round keeps its page cursor and
the per-id memory as each page is handled, and a parent's listing its next child page and
the per-id memory as each child page is handled (not every \`PAGES_KEPT_EVERY_MS\`, as a
window's ledger). What was delivered of the page in flight before its memory was written goes
again. Asked again mid-children: the window's pages of parents, the parents handled since
their page was last kept (listed again, nothing sent again) and, with \`children.deletes\`,
the listing the crash interrupted, once more whole before it is compared. Every delivery,
upstream request and store write of smaller runs is swept in
\`test/engine/crash-sweeps.test.ts\`, which fails on a loss or a redelivery past the bound.
`;
}
