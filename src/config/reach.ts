/**
 * One thing a poller's config reaches outside the Worker, with the config key that names it:
 * what FLEET_POLICY checks. Every module that reaches out (a delivery kind, a source.auth
 * kind, the source itself) declares a list of these, and one function
 * (config/fleet-reach.ts `reachedProblems`) checks every entry, whatever its module: a new
 * kind of thing is a new `what`, which that function must handle (the compiler asks), never a
 * key a literal returns and nobody reads.
 */
export type Reached =
  /** A URL requests go to: FLEET_POLICY.hosts (or public hosts only) and allow_http. */
  | { what: 'url'; key: string; url: string }
  /** A binding of the Worker's (a queue producer, a service binding): FLEET_POLICY.bindings. */
  | { what: 'binding'; key: string; name: string; noun: 'queue' | 'binding' }
  /** A handler of the Worker's; `implicit`: the poller's own name stands for it. FLEET_POLICY.handlers. */
  | { what: 'handler'; key: string; name: string; implicit: boolean };

/** The URLs of a list, by key. */
export function reachedUrls(reach: readonly Reached[]): { key: string; url: string }[] {
  return reach.flatMap((entry) =>
    entry.what === 'url' ? [{ key: entry.key, url: entry.url }] : [],
  );
}
