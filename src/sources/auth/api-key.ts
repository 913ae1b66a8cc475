import * as z from 'zod';
import { credentialForms } from '../../config/credential-forms.ts';
import type { Credential } from './authorizer.ts';
import { type AuthKind, type AuthProblem, headerClash, staticView } from './kind.ts';
import { headerCredential, staticAuthorizer } from './static-auth.ts';

/** A header name as HTTP allows it (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const config = z.strictObject({
  type: z.literal('api_key'),
  /** header (default) or query: where the key is sent. */
  in: z.enum(['header', 'query']).default('header'),
  /** The header or query parameter that takes the key (X-Api-Key, api_key). */
  name: z.string({ error: 'is required when source.auth.type = "api_key"' }).min(1),
  /** The key; use ${SECRET}. */
  key: z.string({ error: 'is required when source.auth.type = "api_key"' }).min(1),
});

type ApiKeyConfig = z.output<typeof config>;

/**
 * `type = "api_key"`: a fixed key in a request header, or in a query parameter of every
 * request to source.url's origin. A key in the query travels in the URL: it is redacted as
 * every credential is, in each form a URL shows it (percent-encoded, form-encoded).
 */
export const apiKey = {
  config,
  example: 'auth = { type = "api_key", in = "query", name = "api_key", key = "${API_KEY}" }',
  summary: 'api_key: a key from the config, in a header or a query parameter (nothing to renew)',
  renews: false,
  toUpstream: true,
  problems(auth, source) {
    if (auth.in === 'header') {
      if (!HEADER_NAME.test(auth.name)) {
        return [{ path: ['auth', 'name'], message: `"${auth.name}" is not a header name` }];
      }
      return headerClash(auth.name, source);
    }
    const problems: AuthProblem[] = [];
    if (Object.hasOwn(source.params, auth.name)) {
      problems.push({
        path: ['params'],
        message: `has a "${auth.name}" parameter and source.auth sends one too: keep one of them`,
      });
    }
    return problems;
  },
  reach: () => [],
  view: () => staticView('api_key'),
  // Redaction takes out a value's percent- and form-encoded forms too (config/interpolate.ts).
  authorizer: (auth) =>
    staticAuthorizer(
      auth.in === 'header'
        ? headerCredential(auth.name, auth.key)
        : queryCredential(auth.name, auth.key),
      credentialForms(auth.key),
    ),
} satisfies AuthKind<ApiKeyConfig>;

/** A credential sent as the query parameter `name` of every request (a redirect's target too). */
function queryCredential(name: string, key: string): Credential & { ok: true } {
  return {
    ok: true,
    value: key,
    authorize: async (request) => {
      const url = new URL(request.url);
      url.searchParams.set(name, key);
      const init: RequestInit & { duplex?: 'half' } = {
        method: request.method,
        headers: request.headers,
        redirect: request.redirect,
        signal: request.signal,
        ...(request.body === null ? {} : { body: request.body, duplex: 'half' }),
      };
      return new Request(url, init);
    },
  };
}
