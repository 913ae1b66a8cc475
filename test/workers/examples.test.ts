import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/duration.ts';
import type { PollerStatus } from '../../src/poller/status.ts';
import { api, setSecret, unique } from '../support/fleet.ts';
import { type Delivery, type FakeReceiver, installFakes } from './fakes.ts';
import { type CommentVendor, servesComments } from './vendors/comments.ts';
import { FakeHubSpot } from './vendors/hubspot.ts';
import { isRoundsVendor, VENDOR_CASES } from './vendors/index.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Runs the poller now and answers its run's outcome. */
async function run(name: string): Promise<string | undefined> {
  const reply = await api('POST', `/pollers/${name}/run`);
  const body = (await reply.json()) as { run?: { outcome: string; error: string | null } };
  if (body.run?.outcome !== 'success') throw new Error(`run: ${JSON.stringify(body)}`);
  return body.run?.outcome;
}

for (const [file, vendor] of Object.entries(VENDOR_CASES)) {
  // Rounds from a resume token and children per parent: tested below.
  if (vendor.scenario === 'rounds' || vendor.scenario === 'children') continue;
  describe(`examples/apis/${file} against a fake of its vendor's documented API`, () => {
    it('asks as the vendor documents, pages, and loses no record that shows late, changes or is deleted', async () => {
      const fake = vendor.fake();
      const { receiver } = installFakes({ [fake.host]: fake });
      const config = parseToml(vendor.example) as Record<string, unknown>;
      const lag = parseDuration(String(config.lag_allowance ?? '0s')) ?? 0;
      // Records that show late or change are stamped this long before the run that sees them.
      const late = vendor.lateBy ?? lag / 2;
      const name = unique(file.replace('.toml', ''));
      const start = Math.floor((Date.now() - HOUR) / MINUTE) * MINUTE;
      const created = await api('PUT', `/pollers/${name}`, {
        ...config,
        // Ticks only when the test says (a tick a day, at an offset of its name).
        every: '1d',
        start_from: new Date(start).toISOString(),
        deliver: {
          type: 'webhook',
          url: 'https://receiver.test/hooks',
          secret: '${WEBHOOK_SECRET}',
        },
      });
      expect(created.status, await created.clone().text()).toBeLessThan(300);
      for (const secret of ownSecrets(vendor.example)) {
        await setSecret(name, secret, vendor.secrets?.[secret] ?? `${secret.toLowerCase()}-value`);
      }

      const now = Date.now();
      for (const [i, id] of ['101', '102', '103', '104', '105'].entries()) {
        fake.put(id, now - (50 - 10 * i) * MINUTE);
      }
      fake.put('106', now - late, { hidden: true }); // written, not shown yet: the vendor's lag
      await run(name);
      const id = (n: string) => `${fake.idPrefix}${n}`;
      expect(receiver.ids().sort()).toEqual(['101', '102', '103', '104', '105'].map(id));
      expect(fake.requests.length).toBeGreaterThanOrEqual(3); // pages of at most two records

      fake.reveal();
      const later = Date.now();
      fake.put('101', later - late); // changed again
      if (vendor.deletes) fake.put('102', later - late, { deleted: true });
      await run(name);

      const second = receiver.deliveries.slice(5);
      expect(second.map((d) => `${d.id}:${d.op}`).sort()).toEqual(
        [`${id('101')}:upsert`, `${id('106')}:upsert`]
          .concat(vendor.deletes ? [`${id('102')}:delete`] : [])
          .sort(),
      );
      expect(fake.refused).toEqual([]);
      await api('DELETE', `/pollers/${name}`);
    });
  });
}

describe('examples/apis/hubspot-contacts.toml pages an offset cursor', () => {
  it('loses no contact when one changes between two pages: the changed one moves to the front and is read again', async () => {
    const vendor = VENDOR_CASES['hubspot-contacts.toml'];
    if (vendor === undefined) throw new Error('no hubspot-contacts.toml case');
    const fake = vendor.fake();
    if (!(fake instanceof FakeHubSpot)) throw new Error('not the HubSpot fake');
    const { receiver } = installFakes({ [fake.host]: fake });
    const name = unique('hubspot-changes');
    const created = await api('PUT', `/pollers/${name}`, {
      ...(parseToml(vendor.example) as Record<string, unknown>),
      every: '1d',
      start_from: new Date(Date.now() - HOUR).toISOString(),
      deliver: { type: 'webhook', url: 'https://receiver.test/hooks', secret: '${WEBHOOK_SECRET}' },
    });
    expect(created.status, await created.clone().text()).toBeLessThan(300);
    await setSecret(name, 'HUBSPOT_TOKEN', 'pat-na1-example');
    const now = Date.now();
    const ids = ['101', '102', '103', '104', '105'];
    for (const [i, id] of ids.entries()) fake.put(id, now - (50 - 10 * i) * MINUTE);
    // The last contact of the first page is edited before the second page is asked for.
    let changed: string | undefined;
    fake.onPage = (page, onPage) => {
      if (page !== 1) return;
      changed = onPage.at(-1);
      if (changed !== undefined) fake.put(changed, Date.now());
    };
    await run(name);
    expect([...new Set(receiver.ids())].sort()).toEqual(ids);

    fake.onPage = undefined;
    const before = receiver.deliveries.length;
    await run(name);
    expect(receiver.deliveries.slice(before).map((d) => d.id)).toEqual([changed]);
    expect(fake.refused).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });
});

for (const [file, vendor] of Object.entries(VENDOR_CASES)) {
  if (vendor.scenario !== 'rounds') continue;
  describe(`examples/apis/${file} against a fake of its vendor's resume tokens`, () => {
    it('rounds deliver what changed and what was deleted, an expired token resyncs, and the receiver ends as the upstream with nothing unchanged sent twice', async () => {
      const fake = vendor.fake();
      if (!isRoundsVendor(fake)) throw new Error(`${file}: not a fake of resume tokens`);
      const { receiver } = installFakes({ [fake.host]: fake });
      const config = parseToml(vendor.example) as { source: { resume: Record<string, unknown> } };
      const resyncDeletes = config.source.resume.resync_deletes === true;
      const name = unique(file.replace('.toml', ''));
      const created = await api('PUT', `/pollers/${name}`, {
        ...config,
        every: '1d',
        deliver: {
          type: 'webhook',
          url: 'https://receiver.test/hooks',
          secret: '${WEBHOOK_SECRET}',
        },
      });
      expect(created.status, await created.clone().text()).toBeLessThan(300);
      for (const secret of ownSecrets(vendor.example)) {
        await setSecret(name, secret, vendor.secrets?.[secret] ?? `${secret.toLowerCase()}-value`);
      }
      const now = Date.now();
      // Ten, so that one delete is within resume.max_deletes' default (10% of the known ids).
      const ids = Array.from({ length: 10 }, (_, i) => String(101 + i));
      for (const [i, id] of ids.entries()) fake.put(id, now - (50 - 2 * i) * MINUTE);
      await run(name); // the first round lists everything: five pages of two
      expect(receiver.ids().sort()).toEqual(ids);
      expect(fake.requests.length).toBe(5);

      fake.put('101', now - 5 * MINUTE); // changed
      fake.put('102', now - 4 * MINUTE, { deleted: true });
      fake.put('111', now - 3 * MINUTE); // new
      const asked = fake.requests.length;
      await run(name); // a round from the token: each of its pages too (or the fake refuses)
      expect(fake.requests.slice(asked).every((r) => fake.fromToken(r.url))).toBe(true);
      expect(receiver.deliveries.slice(10).map((d) => `${d.id}:${d.op}`)).toEqual([
        '101:upsert',
        '102:delete',
        '111:upsert',
      ]);

      fake.expireTokens();
      fake.put('103', now - 2 * MINUTE);
      // Deleted while the token is expired: only a full round that lacks it can tell.
      if (resyncDeletes) fake.put('104', now - MINUTE, { deleted: true });
      await run(name); // expired, then a full round in the same run: only 103 changed
      expect(receiver.deliveries.slice(13).map((d) => `${d.id}:${d.op}`)).toEqual(
        resyncDeletes ? ['103:upsert', '104:delete'] : ['103:upsert'],
      );
      const status = (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;
      expect(status.resume?.last_resync?.reason).toContain('the resume token expired');
      expect(status.audit.map((entry) => entry.action)).toContain('resume_resync');

      // The receiver holds what the upstream holds, and no version went to it twice.
      const held = new Set<string>();
      for (const d of receiver.deliveries) {
        if (d.op === 'delete') held.delete(d.id);
        else held.add(d.id);
      }
      const live = new Map<string, boolean>();
      for (const version of fake.versions) live.set(version.id, !version.deleted);
      const upstream = [...live].filter(([, alive]) => alive).map(([id]) => id);
      expect([...held].sort()).toEqual(upstream.sort());
      const sent = receiver.deliveries.map((d) => `${d.id}@${d.version}`);
      expect(sent.length).toBe(new Set(sent).size);
      expect(fake.refused).toEqual([]);
      await api('DELETE', `/pollers/${name}`);
    });
  });
}

for (const [file, vendor] of Object.entries(VENDOR_CASES)) {
  if (vendor.scenario !== 'children') continue;
  describe(`examples/apis/${file} against a fake of its vendor's issues and comments`, () => {
    it('the receiver ends as the tracker: each comment under its issue at its latest content, a deleted one deleted, none lost to changes mid-paging or a 404, none unchanged sent twice', async () => {
      const fake = vendor.fake();
      if (!servesComments(fake)) throw new Error(`${file}: the fake serves no comments`);
      if (!vendor.deletes) throw new Error(`${file}: comments examples delete (children.deletes)`);
      const t = fake.threads;
      const { receiver } = installFakes({ [fake.host]: fake });
      const config = parseToml(vendor.example) as Record<string, unknown>;
      const lag = parseDuration(String(config.lag_allowance ?? '0s')) ?? 0;
      const name = unique(file.replace('.toml', ''));
      const created = await api('PUT', `/pollers/${name}`, {
        ...config,
        every: '1d',
        start_from: new Date(Math.floor((Date.now() - HOUR) / MINUTE) * MINUTE).toISOString(),
        deliver: {
          type: 'webhook',
          url: 'https://receiver.test/hooks',
          secret: '${WEBHOOK_SECRET}',
        },
      });
      expect(created.status, await created.clone().text()).toBeLessThan(300);
      for (const secret of ownSecrets(vendor.example)) {
        await setSecret(name, secret, vendor.secrets?.[secret] ?? `${secret.toLowerCase()}-value`);
      }

      // Five issues with 3, 2, 3, 0 and 1 comments: pages of two, so most issues page.
      const now = Date.now();
      const comments = new Map<string, number[]>();
      for (const [i, [issue, count]] of (
        [
          ['101', 3],
          ['102', 2],
          ['103', 3],
          ['104', 0],
          ['105', 1],
        ] as const
      ).entries()) {
        const at = now - (50 - 10 * i) * MINUTE;
        t.open(issue, at);
        const ids = Array.from({ length: count }, (_, n) => t.add(issue, `${issue} #${n}`, at));
        comments.set(issue, ids);
      }
      const of = (issue: string, n: number) => comments.get(issue)?.[n] ?? -1;
      await run(name);
      expect(mirror(receiver)).toEqual(upstream(fake));
      expect(receiver.deliveries).toHaveLength(9);

      // Changes stamped within lag_allowance (0.9 of it, then half of it, later), as they
      // show: each bumps its issue, which comes up again in the next window.
      const before = Date.now() - 0.9 * lag;
      t.add('101', 'a comment added', before);
      t.edit('102', of('102', 0), '102 #0, edited', before);
      t.edit('103', of('103', 2), '103 #2, edited', before);
      t.open('106', before);
      t.add('106', 'on an issue deleted once the search listed it', before);
      t.vanishOnceListed('106'); // its comments answer 404
      // While the poller pages 103's comments, its first one is deleted: the rest shift back
      // and the edited third is not on the page asked for next. 104 gets a comment meanwhile.
      let deleted = false;
      t.onPage = (issue, offset) => {
        if (issue !== '103' || offset === 0 || deleted) return;
        deleted = true;
        t.remove('103', of('103', 0), Date.now() - lag / 2);
        t.add('104', 'added while the poller pages', Date.now() - lag / 2);
      };
      const second = receiver.deliveries.length;
      await run(name);
      expect(deleted).toBe(true);
      expect(t.missed).toEqual(['106']);
      // 103's listing lacked its third comment: the second listing, at once, read it (edited),
      // and deleted nothing.
      const child = (issue: string, n: number) => `${fake.issueId(issue)}/${of(issue, n)}`;
      const shown = (from: number) => receiver.deliveries.slice(from).map((d) => `${d.id}:${d.op}`);
      expect(shown(second)).toContain(`${child('103', 2)}:upsert`);
      expect(shown(second).filter((d) => d.endsWith(':delete'))).toEqual([]);
      const third = receiver.deliveries.length;
      await run(name); // 103 and 104, changed mid-run, come up again
      expect(shown(third)).toContain(`${child('103', 0)}:delete`);
      const fourth = receiver.deliveries.length;
      await run(name);
      expect(shown(fourth)).toEqual([]);

      // The receiver holds what the tracker holds; each version went to it once, and 103's
      // second comment, served on four pages, once.
      expect(mirror(receiver)).toEqual(upstream(fake));
      const sent = receiver.deliveries.map((d) => `${d.id}@${d.version}`);
      expect(sent.length).toBe(new Set(sent).size);
      expect(t.served.get(of('103', 1))).toBeGreaterThanOrEqual(4);
      expect(receiver.ids().filter((id) => id === child('103', 1))).toHaveLength(1);
      const removal = receiver.deliveries.find((d) => d.op === 'delete');
      expect(removal && envelopeOf(removal).parent).toBe(fake.issueId('103'));
      expect(fake.refused).toEqual([]);
      await api('DELETE', `/pollers/${name}`);
    });
  });
}

/** A delivery's envelope (one of a batch's, by id). */
function envelopeOf(delivery: Delivery): { parent?: string; record: unknown } {
  const parsed = JSON.parse(delivery.body) as unknown;
  const all = (Array.isArray(parsed) ? parsed : [parsed]) as {
    id: string;
    parent?: string;
    record: unknown;
  }[];
  const found = all.find((envelope) => envelope.id === delivery.id);
  if (found === undefined) throw new Error(`no envelope for ${delivery.id}`);
  return found;
}

/** What the receiver holds after its deliveries in order: each id's parent and record. */
function mirror(receiver: FakeReceiver): Record<string, { parent?: string; record: unknown }> {
  const held: Record<string, { parent?: string; record: unknown }> = {};
  for (const delivery of receiver.deliveries) {
    if (delivery.op === 'delete') delete held[delivery.id];
    else {
      const { parent, record } = envelopeOf(delivery);
      held[delivery.id] = { parent, record };
    }
  }
  return held;
}

/** Every comment the tracker holds, as the receiver should: `<issue id>/<comment id>`. */
function upstream(fake: CommentVendor): Record<string, { parent?: string; record: unknown }> {
  return Object.fromEntries(
    fake.threads
      .all()
      .map(({ issue, comment }) => [
        `${fake.issueId(issue)}/${comment.id}`,
        { parent: fake.issueId(issue), record: fake.commentRecord(issue, comment) },
      ]),
  );
}

/** The `${NAME}`s an example names besides the webhook secret: the poller's own secrets. */
function ownSecrets(text: string): string[] {
  const names = [...text.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((match) => match[1] ?? '');
  return [...new Set(names)].filter((secret) => secret !== 'WEBHOOK_SECRET');
}
