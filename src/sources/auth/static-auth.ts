import { credentialForms } from '../../config/credential-forms.ts';
import type { Authorizer } from './authorizer.ts';

/**
 * `type = "bearer"` and `type = "basic"`: a header built once from the config (its values
 * already resolved from `${SECRET}`s), with nothing to renew.
 */
export function staticAuthorizer(value: string): Authorizer {
  const header = { ok: true as const, value };
  // A Basic header is base64 of user:password: neither form is a `${NAME}` value.
  const forms = credentialForms(value);
  return {
    header: async () => header,
    renewAfter401: async () => null,
    learned: () => forms,
  };
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
