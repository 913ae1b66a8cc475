import { beforeEach, describe, expect, it } from 'vitest';
import { runTable } from '../../src/http/dashboard/run-table.ts';
import type { RunView } from '../../src/poller/status.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeUpstream, installFakes } from './fakes.ts';

let upstream: FakeUpstream;
beforeEach(() => {
  ({ upstream } = installFakes());
});

const read = (path: string) => api('GET', path, undefined, { token: TEST_SECRETS.STATUS_TOKEN });
const runsOf = async (name: string) =>
  ((await (await read(`/pollers/${name}/runs`)).json()) as { runs: RunView[] }).runs;

/** A runtime poller with a few runs: one that delivered, then idle ones, then a skipped one. */
async function withHistory() {
  const name = unique('ids');
  upstream.add('a', Date.now() - 30_000);
  await api('PUT', `/pollers/${name}`, {
    ...runtimeConfig(),
    start_from: new Date(Date.now() - 60_000).toISOString(),
  });
  const delivered = await objectOf(name).runNow();
  await objectOf(name).runNow();
  await objectOf(name).runNow();
  return { name, delivered };
}

describe('runs have ids (GET /pollers/:name/runs/:id)', () => {
  it('gives every run an id, newest first, and the manual run its id in the reply', async () => {
    const { name, delivered } = await withHistory();
    const runs = await runsOf(name);
    expect(delivered).toMatchObject({ outcome: 'ran', run: { records: 1, id: 1 } });
    // The two idle runs after it fold into one line that stands for both ids.
    expect(runs.map((run) => [run.id, run.folded?.first_id ?? null, run.records])).toEqual([
      [3, 2, 0],
      [1, null, 1],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('answers one run by its id, a folded idle run by any id it stands for', async () => {
    const { name } = await withHistory();
    const first = await read(`/pollers/${name}/runs/1`);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ id: 1, records: 1, outcome: 'success' });
    for (const id of [2, 3]) {
      expect(await (await read(`/pollers/${name}/runs/${id}`)).json()).toMatchObject({
        id: 3,
        folded: { first_id: 2 },
      });
    }
    await api('DELETE', `/pollers/${name}`);
  });

  it('keeps an id when the idle run goes into the ring behind a run that did something', async () => {
    const { name } = await withHistory();
    upstream.add('b', Date.now()); // after the checkpoint the idle runs left
    const reply = await objectOf(name).runNow();
    expect(reply).toMatchObject({ run: { id: 4, records: 1 } });
    const runs = await runsOf(name);
    expect(runs.map((run) => run.id)).toEqual([4, 3, 1]);
    expect(await (await read(`/pollers/${name}/runs/2`)).json()).toMatchObject({ id: 3 });
    await api('DELETE', `/pollers/${name}`);
  });

  it('is a 404 for an id not run yet and a 400 for one that is not a number', async () => {
    const { name } = await withHistory();
    expect((await read(`/pollers/${name}/runs/99`)).status).toBe(404);
    expect((await read(`/pollers/${name}/runs/first`)).status).toBe(400);
    expect((await read(`/pollers/${name}/runs/0`)).status).toBe(400);
    await api('DELETE', `/pollers/${name}`);
  });

  it("links each run in the dashboard's run table to its own row", async () => {
    const { name } = await withHistory();
    const table = (await runTable(await runsOf(name))).toString();
    expect(table).toContain('id="run-1"');
    expect(table).toContain('<a href="#run-1">1</a>');
    expect(table).toContain('<a href="#run-3">2–3</a>');
    await api('DELETE', `/pollers/${name}`);
  });
});
