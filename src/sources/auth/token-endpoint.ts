import { redact } from '../../config/interpolate.ts';
import { startDeadline, TIMED_OUT } from '../../deadline.ts';
import type { HttpFetch } from '../http-source.ts';
import { fetchFailure } from '../network-error.ts';
import { readRateLimit } from '../rate-limit.ts';
import { readBody } from '../read-body.ts';
import type { TokenAnswer, TokenEndpoint } from './token-authorizer.ts';

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

/** What asking a token endpoint leans on. */
export interface TokenEndpointOptions {
  timeout: number;
  secrets: readonly string[];
  now: () => number;
  maxWait: number;
}

/**
 * The token endpoint as source.auth's kinds ask it (AuthTools.tokenEndpoint): through
 * `fetcher`, within `options.timeout`, its rate limits held to `options.maxWait`.
 */
export function tokenEndpointOf(fetcher: HttpFetch, options: TokenEndpointOptions): TokenEndpoint {
  return (tokenUrl, form, headers, secrets) =>
    askTokenEndpoint(tokenUrl, form, headers, fetcher, {
      ...options,
      secrets: [...options.secrets, ...secrets],
    });
}

/**
 * POSTs `form` to a token endpoint (RFC 6749 §4, RFC 7523 §2.1) and classifies what it
 * answers; an error body is shown with every token and `secrets` value taken out. Its
 * redirects are never followed: the form holds a credential.
 */
export async function askTokenEndpoint(
  tokenUrl: string,
  form: URLSearchParams,
  extraHeaders: Record<string, string>,
  fetcher: HttpFetch,
  options: TokenEndpointOptions,
): Promise<TokenAnswer> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded',
    ...extraHeaders,
  };
  const { secrets } = options;
  const shown = `POST ${redact(tokenUrl, secrets)}`;
  const deadline = startDeadline(options.timeout);
  try {
    const sent = fetcher(
      new Request(tokenUrl, {
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
        error: `${shown}: HTTP ${response.status} redirect, not followed (the credential in the form would go with it): set token_url to the final address`,
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
    const reason = fetchFailure(error, tokenUrl);
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
