/** A poller name becomes a Durable Object name, a URL segment and part of idempotency keys. */
const POLLER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** Names the fleet's own routes take under /pollers/ (a poller of that name would be shadowed). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(['deletions']);

/**
 * Why `name` cannot name a poller, or null when it can. The Worker and the CLI's `apply`
 * (which checks a folder's file names before it sends anything) read the same rule.
 */
export function pollerNameProblem(name: string): string | null {
  if (!POLLER_NAME.test(name)) {
    return 'name must be 1-63 letters, digits, "_" or "-", starting with a letter or digit';
  }
  if (RESERVED_NAMES.has(name))
    return `"${name}" cannot name a poller: /pollers/${name} is a route`;
  return null;
}
