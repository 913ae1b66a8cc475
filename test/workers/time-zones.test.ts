import { beforeEach, describe, expect, it } from 'vitest';
import { api, objectOf, unique } from '../support/fleet.ts';
import { type FakeHost, type FakeReceiver, installFakes } from './fakes.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PATTERN = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2})$/;

/**
 * Los Angeles by the US rules (since 2007), written out here rather than asked of Intl, so
 * that the fake does not share the poller's reading: PDT (UTC−7) from the second Sunday of
 * March at 02:00 PST to the first Sunday of November at 02:00 PDT, PST (UTC−8) otherwise.
 */
function dstSpan(year: number): [number, number] {
  const sunday = (month: number, nth: number) => {
    const first = new Date(Date.UTC(year, month, 1)).getUTCDay();
    return 1 + ((7 - first) % 7) + 7 * (nth - 1);
  };
  return [Date.UTC(year, 2, sunday(2, 2), 10), Date.UTC(year, 10, sunday(10, 1), 9)];
}
const offsetAt = (at: number) => {
  const [start, end] = dstSpan(new Date(at).getUTCFullYear());
  return at >= start && at < end ? -7 * HOUR : -8 * HOUR;
};
const pad = (n: number) => String(n).padStart(2, '0');

/** An instant as Los Angeles' wall clock, in the pattern the fake takes and writes. */
function laWall(at: number): string {
  const local = new Date(at + offsetAt(at));
  return `${local.getUTCFullYear()}/${pad(local.getUTCMonth() + 1)}/${pad(local.getUTCDate())} ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
}

/**
 * A wall time in Los Angeles as the instant it denotes, as Java reads it: one shown twice at
 * its first occurrence (PDT). One the clocks skip is refused: no instant sends it.
 */
function laInstant(text: string): number | null {
  const match = PATTERN.exec(text);
  if (match === null) return null;
  const [y, mo, d, h, mi] = match.slice(1).map(Number) as [number, number, number, number, number];
  const local = Date.UTC(y, mo - 1, d, h, mi);
  const readings = [local + 7 * HOUR, local + 8 * HOUR].filter((at) => laWall(at) === text);
  return readings[0] ?? null;
}

/**
 * A Jira-like search: only `from` and `to` (`from <= updated < to`), each a wall time of the
 * API user's zone in minutes; every record stamped the same way. Anything else is a 400.
 */
class FakeJira implements FakeHost {
  readonly records: { id: string; at: number }[] = [];
  readonly requests: { from: string; to: string }[] = [];
  readonly refusals: string[] = [];
  /** Answers 503 to every request that starts at this wall time. */
  failFrom: string | null = null;

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const refuse = (why: string) => {
      this.refusals.push(`${why}: ${url.search}`);
      return Response.json({ errorMessages: [why] }, { status: 400 });
    };
    const keys = [...url.searchParams.keys()].sort();
    if (keys.join(',') !== 'from,to') return refuse(`parameters ${keys.join(',')}`);
    const fromText = url.searchParams.get('from') ?? '';
    const toText = url.searchParams.get('to') ?? '';
    const from = laInstant(fromText);
    const to = laInstant(toText);
    if (from === null || to === null) return refuse('not a wall time of the user zone');
    if (fromText > toText) return refuse('from is after to');
    this.requests.push({ from: fromText, to: toText });
    if (fromText === this.failFrom) return new Response('unavailable', { status: 503 });
    const issues = this.records
      .filter((record) => record.at >= from && record.at < to)
      .map((record) => ({ key: record.id, fields: { updated: laWall(record.at) } }));
    return Response.json({ issues });
  }
}

let jira: FakeJira;
let receiver: FakeReceiver;

beforeEach(() => {
  jira = new FakeJira();
  ({ receiver } = installFakes({ 'jira.test': jira }));
});

/**
 * A runtime poller of the fake, with 30-day windows from 2026-02-04 09:30Z: the ninth ends
 * at 2026-11-01 09:30Z, 01:30 PST, the second 01:30 of that night.
 */
async function createJiraPoller(top: Record<string, unknown> = {}): Promise<string> {
  const name = unique('jira');
  const created = await api('PUT', `/pollers/${name}`, {
    every: '1d',
    start_from: '2026-02-04T09:30:00Z',
    max_window: '30d',
    lag_allowance: '2m', // stamps in whole minutes need at least a minute
    ...top,
    source: {
      url: 'https://jira.test/rest/api/3/search',
      from_param: 'from',
      to_param: 'to',
      time_format: 'yyyy/MM/dd HH:mm',
      updated_at_format: 'yyyy/MM/dd HH:mm',
      time_zone: 'America/Los_Angeles',
      items: 'issues',
      id: 'key',
      updated_at: 'fields.updated',
    },
    deliver: { type: 'webhook', url: 'https://receiver.test/hooks', secret: '${WEBHOOK_SECRET}' },
  });
  if (created.status !== 201)
    throw new Error(`PUT ${name}: HTTP ${created.status} ${await created.text()}`);
  return name;
}

describe('bounds and stamps in a pattern and a time zone', () => {
  it('loses nothing across the changes of daylight saving time, to and from an upstream that takes and stamps "yyyy/MM/dd HH:mm" in America/Los_Angeles', async () => {
    const at = (iso: string) => Date.parse(iso);
    // Around 2026-03-08, when 02:00 PST jumps to 03:00 PDT (10:00Z).
    jira.records.push({ id: 'spring-0159', at: at('2026-03-08T09:59:00Z') });
    jira.records.push({ id: 'spring-0300', at: at('2026-03-08T10:00:00Z') });
    jira.records.push({ id: 'spring-0330', at: at('2026-03-08T10:30:00Z') });
    // Around 2026-11-01, when 02:00 PDT goes back to 01:00 PST (09:00Z): 01:00 to 02:00
    // shows twice, and two records stamped `2026/11/01 01:30` are an hour apart.
    jira.records.push({ id: 'fall-0110-pdt', at: at('2026-11-01T08:10:00Z') });
    jira.records.push({ id: 'fall-0130-pdt', at: at('2026-11-01T08:30:00Z') });
    jira.records.push({ id: 'fall-0115-pst', at: at('2026-11-01T09:15:00Z') });
    jira.records.push({ id: 'fall-0130-pst', at: at('2026-11-01T09:30:00Z') });
    jira.records.push({ id: 'fall-0145-pst', at: at('2026-11-01T09:45:00Z') });
    jira.records.push({ id: 'fall-0230-pst', at: at('2026-11-01T10:30:00Z') });
    jira.records.push({ id: 'recent', at: Math.floor((Date.now() - DAY) / 60_000) * 60_000 });
    // Asked for again by the next run (it starts lag_allowance before the end of this one):
    // the ledger knows it only if its stamp is read in the zone it was written in.
    jira.records.push({ id: 'edge', at: Math.floor((Date.now() - 90_000) / 60_000) * 60_000 });

    const name = await createJiraPoller();

    const run = (await objectOf(name).runNow()) as { outcome: string; run?: { outcome: string } };
    expect(run).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });

    expect(jira.refusals).toEqual([]);
    expect(receiver.ids().sort()).toEqual(jira.records.map((record) => record.id).sort());
    // Each window starts where the one before it ended, in the wall time it was sent.
    const { requests } = jira;
    for (let i = 1; i < requests.length; i += 1) {
      expect(requests[i]?.from).toBe(requests[i - 1]?.to);
    }
    expect(requests.map((request) => request.to)).toContain('2026/11/01 01:30');
    expect(requests[0]?.from).toBe('2026/02/04 01:30');
    // The stamps, as the upstream wrote them, are the versions delivered.
    const versions = Object.fromEntries(receiver.deliveries.map((d) => [d.id, d.version]));
    expect(versions['fall-0130-pdt']).toBe('2026/11/01 01:30');
    expect(versions['fall-0130-pst']).toBe('2026/11/01 01:30');
    expect(versions['spring-0300']).toBe('2026/03/08 03:00');

    // The next run asks from where the last one ended: nothing is asked for twice, or lost.
    const again = (await objectOf(name).runNow()) as { outcome: string; run?: { outcome: string } };
    expect(again).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    expect(receiver.ids()).toHaveLength(jira.records.length);
    expect(jira.refusals).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('ends a window at the first occurrence of a wall time shown twice: the checkpoint is the instant the upstream read', async () => {
    // The window after the ninth fails, whatever it would hold: C is the ninth window's end,
    // which was sent as 2026/11/01 01:30 and read as 01:30 PDT, not the 01:30 PST it planned.
    jira.failFrom = '2026/11/01 01:30';
    const name = await createJiraPoller();

    const run = (await objectOf(name).runNow()) as {
      run?: { outcome: string; checkpoint: number };
    };

    expect(run.run?.outcome).toBe('failed');
    expect(jira.requests[8]?.to).toBe('2026/11/01 01:30');
    expect(new Date(run.run?.checkpoint ?? 0).toISOString()).toBe('2026-11-01T08:30:00.000Z');
    await api('DELETE', `/pollers/${name}`);
  });
});
