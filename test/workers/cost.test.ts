import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

type Poller = ReturnType<typeof newPoller>;

/** What the object says it wrote: SQLite's rows (index rows included) and alarm writes. */
async function written(poller: Poller) {
  const stats = await poller.stub().storageStats();
  return { rows: stats.rowsWritten, alarms: stats.alarmWrites };
}

/** The counters as persisted in the state row: what survives a restart. */
async function persisted(poller: Poller) {
  const [row] = await poller.sql<{ rows_written: number; alarm_writes: number }>(
    'SELECT rows_written, alarm_writes FROM poller_state',
  );
  return { rows: row?.rows_written, alarms: row?.alarm_writes };
}

/** The writes of one own tick, and its run. */
async function tickCost(poller: Poller) {
  const before = await written(poller);
  await poller.ownTick();
  const after = await written(poller);
  const run = (await poller.runs())[0];
  return { rows: after.rows - before.rows, alarms: after.alarms - before.alarms, run };
}

/** A poller that schedules itself, past its first runs (which store its checkpoint and name). */
async function steadyPoller() {
  const poller = newPoller('batched'); // pages of 250, webhook batches of 100
  await poller.setCheckpoint(Date.now() - MINUTE);
  await poller.stub().ensureScheduled();
  await poller.ownTick();
  await poller.ownTick();
  return poller;
}

/**
 * `count` new records, stamped well inside the window the next run asks for: the last minute,
 * as if the last run had been a minute ago (the checkpoint moved back by hand, not counted).
 */
async function publish(poller: Poller, count: number, tag: string) {
  const now = Date.now();
  await poller.setCheckpoint(now - MINUTE);
  upstream.updates.length = 0; // only the new ones: none of the last run's is asked for again
  for (let i = 0; i < count; i += 1) upstream.add(`${tag}-${i}`, now - 30_000 + i * 100);
}

describe('rows written per run, as Cloudflare bills them (alarm writes included)', () => {
  it('an empty run writes no row and sets the alarm once: 1 in all', async () => {
    const poller = await steadyPoller();
    for (let i = 0; i < 5; i += 1) {
      const cost = await tickCost(poller);
      expect(cost.run).toMatchObject({ outcome: 'success', records: 0 });
      // The lease, the next tick, the checkpoint, the lease's release and the run's history
      // line wait in memory (IDLE_WRITE_EVERY_MS); the alarm moved to the next tick once.
      expect({ rows: cost.rows, alarms: cost.alarms }).toEqual({ rows: 0, alarms: 1 });
    }
  });

  it('a run that delivers 100 records writes 3 rows and sets the alarm once: 4 in all', async () => {
    const poller = await steadyPoller();
    await publish(poller, 100, 'a');
    const first = await tickCost(poller);
    expect(first.run).toMatchObject({ outcome: 'success', records: 100, pages: 1 });
    // After idle runs, the last of them takes its place in the history: one row more.
    expect({ rows: first.rows, alarms: first.alarms }).toEqual({ rows: 4, alarms: 1 });
    for (let i = 0; i < 3; i += 1) {
      await publish(poller, 100, `b${i}`);
      const cost = await tickCost(poller);
      expect(cost.run).toMatchObject({ outcome: 'success', records: 100 });
      expect({ rows: cost.rows, alarms: cost.alarms }).toEqual({ rows: 3, alarms: 1 });
    }
    expect(receiver.deliveries).toHaveLength(400);
  });

  it('keeps its counters in storage: a restart loses none of them', async () => {
    const poller = await steadyPoller();
    await publish(poller, 100, 'c');
    await poller.ownTick();
    const before = await persisted(poller);
    expect(before).toEqual(await written(poller));
    await poller.abort(); // a deploy or an eviction: the object's memory is gone
    expect(await persisted(poller)).toEqual(before);
    expect(await written(poller)).toEqual(before);
    const cost = await tickCost(poller);
    expect(cost.run).toMatchObject({ outcome: 'success', records: 0 });
    expect({ rows: cost.rows, alarms: cost.alarms }).toEqual({ rows: 0, alarms: 1 });
  });

  it('lists the idle runs it folded only by their last one, between the runs that did something', async () => {
    const poller = await steadyPoller();
    await publish(poller, 1, 'd');
    await poller.ownTick();
    await poller.ownTick();
    await poller.ownTick();
    const runs = await poller.runs();
    expect(runs[0]).toMatchObject({ outcome: 'success', records: 0 });
    expect(runs[1]).toMatchObject({ outcome: 'success', records: 1 });
    const status = await poller.status();
    expect(status.counters.runs).toBe(5);
  });
});
