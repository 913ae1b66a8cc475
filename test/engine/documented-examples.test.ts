import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import configuration from '../../docs/configuration.md?raw';
import delivery from '../../docs/delivery.md?raw';
import { loadPollers } from '../../src/config/load.ts';
import { deliveryKinds } from '../../src/delivery/kinds/index.ts';
import { authKinds } from '../../src/sources/auth/index.ts';
import { pagingStyles } from '../../src/sources/paging/index.ts';
import { markdownSection } from '../support/markdown-table.ts';
import { wranglerFixture } from '../support/wrangler-fixture.ts';

/**
 * Each paging style, auth kind and delivery kind brings the example the docs show for it (paging
 * styles and auth kinds in docs/configuration.md, delivery kinds in docs/delivery.md): the docs must show it
 * as it is, and it must be a valid config of that style or kind, read from TOML the way
 * wrangler reads a user's.
 */

const paging = markdownSection(configuration, '## Paging styles');
const auth = markdownSection(configuration, '## Auth kinds');

/** A poller per style and per kind, each written with the module's example. */
function examplePollers(): string {
  const styles = Object.entries(pagingStyles).map(
    ([type, style]) => `
[vars.POLLERS.style_${type}]
cron = "* * * * *"
[vars.POLLERS.style_${type}.source]
url = "https://api.example.com/v1/items"
from_param = "since"
${style.example}
[vars.POLLERS.style_${type}.deliver]
type = "handler"
name = "demo-sessions"
`,
  );
  const kinds = Object.entries(deliveryKinds).map(
    ([type, kind]) => `
[vars.POLLERS.kind_${type}]
cron = "* * * * *"
[vars.POLLERS.kind_${type}.source]
url = "https://api.example.com/v1/items"
from_param = "since"
${kind.example.replaceAll('[vars.POLLERS.sessions.', `[vars.POLLERS.kind_${type}.`)}
`,
  );
  const auths = Object.entries(authKinds).map(
    ([type, kind]) => `
[vars.POLLERS.auth_${type}]
cron = "* * * * *"
[vars.POLLERS.auth_${type}.source]
url = "https://api.example.com/v1/items"
from_param = "since"
${kind.example}
[vars.POLLERS.auth_${type}.deliver]
type = "handler"
name = "demo-sessions"
`,
  );
  return [...styles, ...kinds, ...auths].join('');
}

describe('the docs show the example of every paging style, auth kind and delivery kind', () => {
  it.each(Object.entries(pagingStyles))('shows the %s paging example', (_type, style) => {
    expect(paging).toContain(style.example);
  });

  it.each(Object.entries(authKinds))('shows the %s auth example', (_type, kind) => {
    expect(auth).toContain(kind.example);
  });

  it.each(Object.entries(deliveryKinds))('shows the %s delivery example', (_type, kind) => {
    expect(delivery).toContain(kind.example);
  });

  it('are valid configs of their own style or kind, as TOML', () => {
    const config = unstable_readConfig({ config: wranglerFixture(examplePollers()) });
    const loaded = loadPollers({
      ...(config.vars as Record<string, unknown>),
      WEBHOOK_SECRET: `whsec_${btoa('k'.repeat(24))}`,
      ORDERS_TOKEN: 'o',
      UPSTREAM_TOKEN: 't',
      API_TOKEN: 'p',
      API_KEY: 'k',
      CLIENT_SECRET: 's',
      REFRESH_TOKEN: 'r',
      GOOGLE_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----',
    });
    expect(loaded.errors).toEqual([]);
    const types = new Map<string, string>();
    for (const entry of loaded.pollers) {
      expect(entry.ok ? [] : entry.errors).toEqual([]);
      if (!entry.ok) continue;
      types.set(entry.name, entry.config.source.next.type);
      if (entry.name.startsWith('kind_')) types.set(entry.name, entry.config.deliver.type);
      if (entry.name.startsWith('auth_'))
        types.set(entry.name, entry.config.source.auth?.type ?? '');
    }
    for (const type of Object.keys(pagingStyles)) expect(types.get(`style_${type}`)).toBe(type);
    for (const type of Object.keys(deliveryKinds)) expect(types.get(`kind_${type}`)).toBe(type);
    for (const type of Object.keys(authKinds)) expect(types.get(`auth_${type}`)).toBe(type);
  });
});
