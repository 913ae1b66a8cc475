import { describe, expect, it } from 'vitest';
import type { PollerStatus } from '../../src/poller/status.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';

const TOKEN = 'CPDAlvWDx70CEPDAlvWDx70CGAU';

/**
 * A sync feed: a round from source.url ends with TOKEN; a round from TOKEN has two pages, and
 * its second fails (500) with a body that echoes the URL it was asked, the token in it.
 */
function syncFeed() {
  return {
    handle: async (request: Request) => {
      const url = new URL(request.url);
      const token = url.searchParams.get('syncToken');
      if (token === null) return Response.json({ items: [{ id: 'a' }], nextSyncToken: TOKEN });
      if (url.searchParams.get('pageToken') === null) {
        return Response.json({ items: [{ id: 'b' }], nextPageToken: 'p2' });
      }
      return new Response(`cannot serve ${request.url}`, { status: 500 });
    },
  };
}

describe('status of a poller with source.resume', () => {
  it("shows the token's age and the round's pages, and never the token, not even in a failed page's error", async () => {
    installFakes({ 'sync.test': syncFeed() });
    const name = unique('resume-status');
    const base = runtimeConfig();
    const put = await api('PUT', `/pollers/${name}`, {
      ...base,
      source: {
        url: 'https://sync.test/events',
        items: 'items',
        next: { type: 'cursor', param: 'pageToken', path: 'nextPageToken' },
        resume: { path: 'nextSyncToken', param: 'syncToken' },
      },
    });
    expect(put.status).toBeLessThan(300);
    await objectOf(name).runNow();
    await objectOf(name).runNow();
    const reply = await api('GET', `/status/${name}`);
    const text = await reply.text();
    const status = JSON.parse(text) as PollerStatus;
    expect(status.last_run?.error).toContain('syncToken=CPDAlv…');
    expect(status.resume).toMatchObject({ token_stored: true, round_pages: 1 });
    expect(status.resume?.token_age_seconds).toBeGreaterThanOrEqual(0);
    expect(text).not.toContain(TOKEN);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never shows a token a page hands out: a next link in the page error, a new delta link its body quotes', async () => {
    const skip = 'X0AJYQ3MlnBRrzKqYvPAZ5dcYqP5hv1hSBW';
    const delta = 'oEcOySpF_hWYmTIUZBOIuITRxzf7jVo0Kk';
    installFakes({
      'graph.test': {
        handle: async (request: Request) => {
          const url = new URL(request.url);
          if (!url.searchParams.has('$skiptoken')) {
            const next = `https://graph.test/v1.0/users/delta?$skiptoken=${skip}`;
            return Response.json({ value: [{ id: 'u1' }], '@odata.nextLink': next });
          }
          const link = `https://graph.test/v1.0/users/delta?$deltatoken=${delta}`;
          return Response.json({ error: { message: `try ${link}` } }, { status: 503 });
        },
      },
    });
    const name = unique('resume-links');
    const put = await api('PUT', `/pollers/${name}`, {
      ...runtimeConfig(),
      source: {
        url: 'https://graph.test/v1.0/users/delta',
        items: 'value',
        next: { type: 'url', path: '@odata.nextLink' },
        resume: { path: '@odata.deltaLink' },
      },
    });
    expect(put.status).toBeLessThan(300);
    await objectOf(name).runNow();
    const text = await (await api('GET', `/status/${name}`)).text();
    const status = JSON.parse(text) as PollerStatus;
    expect(status.last_run?.error).toContain('GET https://graph.test/v1.0/users/delta?…: HTTP 503');
    expect(status.resume).toMatchObject({ token_stored: false, round_pages: 1 });
    expect(text).not.toContain(skip);
    expect(text).not.toContain(delta);
    await api('DELETE', `/pollers/${name}`);
  });
});
