import { credentialForms } from '../../config/credential-forms.ts';
import { redact } from '../../config/interpolate.ts';
import type { AuthConfig } from '../../config/schema.ts';
import { startDeadline, TIMED_OUT } from '../../deadline.ts';
import type { HttpFetch } from '../http-source.ts';
import { fetchFailure } from '../network-error.ts';
import { readRateLimit } from '../rate-limit.ts';
import { readBody } from '../read-body.ts';
import { basicHeader } from './static-auth.ts';

type OAuth2Config = Extract<AuthConfig, { type: 'oauth2' }>;

/** What a token endpoint answered (RFC 6749 §5), as the authorizer acts on it. */
export type TokenAnswer =
  | { ok: true; accessToken: string; expiresInMs: number | null; refreshToken: string | null }
  | {
      ok: false;
      /** reconnect: the refresh token is refused for good (invalid_grant); a person must give a new one. */
      kind: 'reconnect' | 'misconfigured' | 'transient' | 'rate_limited';
      error: string;
      retryAfter?: number;
    };

/** The largest token response read. */
const MAX_TOKEN_BODY = 64 * 1024;
/** How much of an error body is shown. */
const SNIPPET = 200;
/** Errors of RFC 6749 §5.2 that say the client's own setup is wrong, not the grant. */
const CLIENT_ERRORS = new Set([
  'invalid_client',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_request',
]);

/**
 * Asks the token endpoint for an access token: with `refreshToken` (grant = "refresh_token"),
 * or as the client (grant = "client_credentials"). The client authenticates with HTTP Basic
 * (client_auth = "basic", RFC 6749 §2.3.1) or in the body ("body"). What it answers is
 * classified; an error body is shown with every token and secret value taken out.
 */
export async function requestToken(
  config: OAuth2Config,
  refreshToken: string | null,
  fetcher: HttpFetch,
  options: { timeout: number; secrets: readonly string[]; now: () => number; maxWait: number },
): Promise<TokenAnswer> {
  const form = new URLSearchParams();
  form.set('grant_type', config.grant);
  if (config.grant === 'refresh_token' && refreshToken !== null)
    form.set('refresh_token', refreshToken);
  if (config.scope !== undefined) form.set('scope', config.scope);
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded',
  };
  if (config.client_auth === 'basic' && config.client_secret !== undefined) {
    headers.authorization = basicHeader(
      encodeURIComponent(config.client_id),
      encodeURIComponent(config.client_secret),
    );
  } else {
    form.set('client_id', config.client_id);
    if (config.client_secret !== undefined) form.set('client_secret', config.client_secret);
  }
  const secrets = [
    ...options.secrets,
    ...(refreshToken === null ? [] : [refreshToken]),
    // The client's Basic header, in case the endpoint echoes it: base64 of id:secret.
    ...(headers.authorization === undefined ? [] : credentialForms(headers.authorization)),
  ];
  const shown = `POST ${redact(config.token_url, secrets)}`;
  const deadline = startDeadline(options.timeout);
  try {
    const sent = fetcher(
      new Request(config.token_url, {
        method: 'POST',
        headers,
        body: form.toString(),
        redirect: 'manual',
        signal: deadline.signal,
      }),
    );
    const response = await Promise.race([sent, deadline.expired]);
    if (response === TIMED_OUT)
      return { ok: false, kind: 'transient', error: `${shown}: timed out` };
    const body = await readBody(response, MAX_TOKEN_BODY, deadline);
    const text = body.ok ? body.text : '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (response.ok) return accepted(parsed, shown);
    if (response.status >= 300 && response.status < 400) {
      return {
        ok: false,
        kind: 'misconfigured',
        error: `${shown}: HTTP ${response.status} redirect, not followed (the client secret would go with it): set token_url to the final address`,
      };
    }
    const code = errorCode(parsed);
    const what = `${shown}: HTTP ${response.status}${code ? ` ${code}` : ''}; body ${JSON.stringify(shownBody(parsed, text, secrets))}`;
    if (response.status === 429 || response.status === 503) {
      const limit = readRateLimit(response.headers, options.now(), options.maxWait);
      if (response.status === 429 || limit.notBefore !== undefined) {
        return {
          ok: false,
          kind: 'rate_limited',
          error: what,
          ...(limit.notBefore === undefined ? {} : { retryAfter: limit.notBefore }),
        };
      }
    }
    if (response.status >= 500) return { ok: false, kind: 'transient', error: what };
    if (code === 'invalid_grant') return { ok: false, kind: 'reconnect', error: what };
    if (code !== null && CLIENT_ERRORS.has(code))
      return { ok: false, kind: 'misconfigured', error: what };
    if (response.status === 401 || response.status === 403) {
      return { ok: false, kind: 'misconfigured', error: what };
    }
    return {
      ok: false,
      kind: response.status >= 400 && response.status < 500 ? 'misconfigured' : 'transient',
      error: what,
    };
  } catch (error) {
    const reason = fetchFailure(error, config.token_url);
    return { ok: false, kind: 'transient', error: `${shown}: ${redact(reason, secrets)}` };
  } finally {
    deadline.clear();
  }
}

function accepted(parsed: unknown, shown: string): TokenAnswer {
  const token = field(parsed, 'access_token');
  if (typeof token !== 'string' || token === '') {
    return {
      ok: false,
      kind: 'transient',
      error: `${shown}: HTTP 200 but no access_token in the body`,
    };
  }
  const expiresIn = field(parsed, 'expires_in');
  const seconds = typeof expiresIn === 'string' ? Number(expiresIn) : expiresIn;
  const refresh = field(parsed, 'refresh_token');
  return {
    ok: true,
    accessToken: token,
    expiresInMs:
      typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0
        ? seconds * 1000
        : null,
    refreshToken: typeof refresh === 'string' && refresh !== '' ? refresh : null,
  };
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? Reflect.get(value, key) : undefined;
}

function errorCode(parsed: unknown): string | null {
  const code = field(parsed, 'error');
  return typeof code === 'string' ? code : null;
}

/** An error body as shown: every value that could be a token replaced, secrets redacted, cut short. */
function shownBody(parsed: unknown, text: string, secrets: readonly string[]): string {
  const shown =
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? JSON.stringify(
          Object.fromEntries(
            Object.entries(parsed).map(([key, value]) =>
              key === 'error' || key === 'error_description' || key === 'error_uri'
                ? [key, value]
                : [key, '[redacted]'],
            ),
          ),
        )
      : text;
  return redact(shown, secrets).slice(0, SNIPPET);
}
