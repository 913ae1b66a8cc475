import { exports } from 'cloudflare:workers';

/** A request to the Worker's own fetch handler, with a bearer token when one is given. */
export function call(method: string, path: string, token?: string, body?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
}
