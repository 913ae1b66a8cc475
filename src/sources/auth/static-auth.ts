import { credentialForms } from '../../config/credential-forms.ts';
import type { Authorizer, Credential } from './authorizer.ts';

/**
 * A credential built once from the config (its values already resolved from `${SECRET}`s),
 * with nothing to renew: `bearer`, `basic` and `api_key`. `forms`: what to redact of it
 * that the config does not hold as written (a Basic header's base64, an encoded key).
 */
export function staticAuthorizer(
  credential: Credential & { ok: true },
  forms: string[],
): Authorizer {
  return {
    credential: async () => credential,
    renewAfter401: async () => null,
    learned: () => forms,
  };
}

/** A credential sent as the request header `name`. */
export function headerCredential(name: string, value: string): Credential & { ok: true } {
  return {
    ok: true,
    value,
    authorize: async (request) => {
      request.headers.set(name, value);
      return request;
    },
  };
}

/** An Authorization header, and its forms to redact (a Basic header's is base64 of user:password). */
export function authorizationAuthorizer(value: string): Authorizer {
  return staticAuthorizer(headerCredential('authorization', value), credentialForms(value));
}

export function bearerHeader(token: string): string {
  return `Bearer ${token}`;
}

export function basicHeader(username: string, password: string): string {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}
