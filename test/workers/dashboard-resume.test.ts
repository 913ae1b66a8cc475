import { describe, expect, it } from 'vitest';
import { pageText, pollerPage } from '../support/dashboard-page.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';

const TOKEN = 'CPDAlvWDx70CEPDAlvWDx70CGAU';

/**
 * A sync feed: a round from source.url lists a and ends with TOKEN; a round from TOKEN has
 * two pages, and its second fails (500) while `failing`.
 */
function syncFeed() {
  const feed = {
    failing: true,
    handle: async (request: Request) => {
      const url = new URL(request.url);
      if (url.searchParams.get('syncToken') === null) {
        return Response.json({ items: [{ id: 'a' }], nextSyncToken: TOKEN });
      }
      if (url.searchParams.get('pageToken') === null) {
        return Response.json({ items: [{ id: 'b' }], nextPageToken: 'p2' });
      }
      if (feed.failing) return new Response(`cannot serve ${request.url}`, { status: 500 });
      return Response.json({ items: [], nextSyncToken: TOKEN });
    },
  };
  return feed;
}

/** The Resume token section's text. */
const section = (html: string) =>
  pageText(/<h3 id="resume">Resume token<\/h3>([\s\S]*?)<h3/.exec(html)?.[1] ?? '');

describe('the dashboard shows a resume poller’s token age and round', () => {
  it("shows the token's age, the round in progress and the last resync, never the token", async () => {
    installFakes({ 'sync.test': syncFeed() });
    const name = unique('dash-resume');
    const put = await api('PUT', `/pollers/${name}`, {
      ...runtimeConfig(),
      source: {
        url: 'https://sync.test/events',
        items: 'items',
        next: { type: 'cursor', param: 'pageToken', path: 'nextPageToken' },
        resume: { path: 'nextSyncToken', param: 'syncToken' },
      },
    });
    expect(put.status).toBeLessThan(300);
    await objectOf(name).runNow();
    let html = await pollerPage(name);
    expect(section(html)).toMatch(/Token stored \d{4}-\d\d-\d\d [\d:]+Z, \d+s old/);
    expect(section(html)).toContain('Round none in progress');
    expect(section(html)).toContain('Last resync none');

    await objectOf(name).runNow(); // the round from the token stops at its failing page 2
    html = await pollerPage(name);
    expect(section(html)).toContain('Round 1 page handled; the next run continues after it');
    expect(html).not.toContain(TOKEN);

    await api('PUT', `/pollers/${name}/checkpoint`, { resync: true, reason: 'stuck' });
    html = await pollerPage(name);
    expect(section(html)).toContain('Token none: the next round starts from source.url');
    expect(section(html)).toContain('an admin asked for a resync: stuck');
    expect(pageText(html)).toContain('resync asked for: the resume token cleared');
    await api('DELETE', `/pollers/${name}`);
  });

  it('has no Resume token section for a poller without source.resume', async () => {
    installFakes();
    const name = unique('dash-plain');
    expect((await api('PUT', `/pollers/${name}`, runtimeConfig())).status).toBeLessThan(300);
    expect(await pollerPage(name)).not.toContain('id="resume"');
    await api('DELETE', `/pollers/${name}`);
  });
});
