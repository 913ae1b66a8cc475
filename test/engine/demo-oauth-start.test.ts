import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import example from '../../.dev.vars.example?raw';
import { checkConfig } from '../../scripts/check-config.ts';
import { DEMO_POLLER, demoOAuthFlag, withDemoOAuth } from '../../scripts/demo-oauth.ts';
import { fillDevVars, parseDevVars } from '../../scripts/dev-vars.ts';

const ORIGIN = 'http://127.0.0.1:8787';

type Table = Record<string, { source: Record<string, unknown> } & Record<string, unknown>>;

const committed = () => unstable_readConfig({ config: 'wrangler.toml' }).vars.POLLERS as Table;

describe('npm start with DEMO_OAUTH: the demo poller on source.auth = oauth2', () => {
  it('reads the flag from its own environment first, then .dev.vars, and hands the Worker the same value', () => {
    expect(demoOAuthFlag({}, {})).toEqual({ on: false, args: [] });
    expect(demoOAuthFlag({}, { DEMO_OAUTH: '1' })).toEqual({
      on: true,
      args: ['--var', 'DEMO_OAUTH:1'],
    });
    expect(demoOAuthFlag({ DEMO_OAUTH: 'true' }, {}).on).toBe(true);
    // `DEMO_OAUTH=0 npm start` wins over a line in .dev.vars, for the Worker too (a --var).
    expect(demoOAuthFlag({ DEMO_OAUTH: '0' }, { DEMO_OAUTH: '1' })).toEqual({
      on: false,
      args: ['--var', 'DEMO_OAUTH:0'],
    });
  });

  it("switches only the demo poller's Authorization header for oauth2 against this Worker's token endpoint", () => {
    const pollers = committed();
    const switched = withDemoOAuth(pollers, ORIGIN) as Table;
    const demo = switched[DEMO_POLLER];
    expect(demo?.source.auth).toEqual({
      type: 'oauth2',
      token_url: `${ORIGIN}/demo/oauth/token`,
      client_id: 'tidemark-demo',
      client_secret: '${DEMO_CLIENT_SECRET}',
      refresh_token: '${DEMO_REFRESH_TOKEN}',
    });
    expect(demo?.source.headers).toEqual({});
    const { auth: _auth, headers: _headers, ...rest } = demo?.source ?? {};
    const { headers: _was, ...before } = pollers[DEMO_POLLER]?.source ?? {};
    expect(rest).toEqual(before);
    expect(withDemoOAuth({}, ORIGIN)).toBeNull();
  });

  it("is a valid config with the secrets npm start generates, and needs the demo client's two", () => {
    const secrets = parseDevVars(fillDevVars(example));
    const pollers = withDemoOAuth(committed(), ORIGIN) ?? {};
    const result = checkConfig({ secrets, strict: true, pollers });
    expect(result.errors).toEqual([]);
    expect(result.valid.map((entry) => entry.name)).toContain(DEMO_POLLER);
    const names = result.secrets.map((need) => need.name);
    expect(names).toEqual(expect.arrayContaining(['DEMO_CLIENT_SECRET', 'DEMO_REFRESH_TOKEN']));
    // wrangler.toml itself, as deployed, still needs neither.
    const deployed = checkConfig({ secrets, strict: true }).secrets.map((need) => need.name);
    expect(deployed).not.toContain('DEMO_REFRESH_TOKEN');
  });
});
