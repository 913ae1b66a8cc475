import { expect } from 'vitest';
import { call } from './call.ts';
import { TEST_SECRETS } from './pollers.ts';

/** What the dashboard tests read from a poller's page. */

/** The poller page's panel HTML, as the dashboard loads it. */
export async function pollerPage(name: string, token = TEST_SECRETS.ADMIN_TOKEN): Promise<string> {
  const response = await call('GET', `/dashboard/pollers/${name}/panel`, token);
  expect(response.status).toBe(200);
  return response.text();
}

/** Tags stripped, whitespace folded. */
export const pageText = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
