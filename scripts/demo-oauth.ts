/**
 * `npm start` with DEMO_OAUTH=1 (in the environment, or a line in .dev.vars): the demo
 * upstream's sessions endpoints then want an access token of the demo's OAuth provider
 * (src/demo/oauth-flag.ts), so the demo poller authenticates with `source.auth = oauth2`
 * against POST /demo/oauth/token, with DEMO_CLIENT_SECRET and DEMO_REFRESH_TOKEN from
 * .dev.vars, instead of sending the read token. wrangler.toml keeps the read token, so a
 * deploy needs nothing more: npm start hands `wrangler dev` the changed POLLERS as a --var.
 *
 * The token endpoint is this machine's address: oauth2 asks its token_url with a plain fetch,
 * not through source.service (SELF), and only `npm start` knows the port.
 */
import { DEMO_CLIENT_ID, DEMO_TOKEN_PATH } from '../src/demo/oauth-client.ts';

/** The poller npm start switches to oauth2. */
export const DEMO_POLLER = 'demo_sessions';

/** Whether a DEMO_OAUTH value turns the flag on ("1" or "true"). */
export function isOn(value: string | undefined): boolean {
  return value === '1' || value?.toLowerCase() === 'true';
}

/**
 * DEMO_OAUTH as npm start sees it: its own environment's (DEMO_OAUTH=1 npm start), else
 * .dev.vars'; and the `wrangler dev` arguments that give the Worker the same value (a --var
 * wins over .dev.vars), none when neither sets it.
 */
export function demoOAuthFlag(
  processEnv: Record<string, string | undefined>,
  devVars: Record<string, string>,
): { on: boolean; args: string[] } {
  const value = processEnv.DEMO_OAUTH ?? devVars.DEMO_OAUTH;
  if (value === undefined) return { on: false, args: [] };
  const on = isOn(value);
  return { on, args: ['--var', `DEMO_OAUTH:${on ? '1' : '0'}`] };
}

/** The oauth2 table the demo poller uses under the flag. */
export function demoOAuthAuth(origin: string): Record<string, string> {
  return {
    type: 'oauth2',
    token_url: `${origin}${DEMO_TOKEN_PATH}`,
    client_id: DEMO_CLIENT_ID,
    client_secret: '${DEMO_CLIENT_SECRET}',
    refresh_token: '${DEMO_REFRESH_TOKEN}',
  };
}

/**
 * POLLERS with the demo poller on `source.auth = oauth2` (its Authorization header, the read
 * token, left out: a source has one or the other), every other poller as it is. Null when
 * there is no demo poller to switch.
 */
export function withDemoOAuth(pollers: unknown, origin: string): Record<string, unknown> | null {
  if (pollers === null || typeof pollers !== 'object') return null;
  const table = pollers as Record<string, unknown>;
  const demo = table[DEMO_POLLER] as { source?: Record<string, unknown> } | undefined;
  if (demo?.source === undefined) return null;
  const headers = Object.fromEntries(
    Object.entries((demo.source.headers ?? {}) as Record<string, string>).filter(
      ([name]) => name.toLowerCase() !== 'authorization',
    ),
  );
  return {
    ...table,
    [DEMO_POLLER]: {
      ...demo,
      source: { ...demo.source, headers, auth: demoOAuthAuth(origin) },
    },
  };
}
