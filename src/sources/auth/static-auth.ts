import type { Authorizer } from './authorizer.ts';

/**
 * `type = "bearer"` and `type = "basic"`: a header built once from the config (its values
 * already resolved from `${SECRET}`s), with nothing to renew.
 */
export function staticAuthorizer(value: string): Authorizer {
  const header = { ok: true as const, value };
  return {
    header: async () => header,
    renewAfter401: async () => null,
    learned: () => [],
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
