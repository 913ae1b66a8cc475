import { kindOf } from '../delivery/kinds/index.ts';
import { authKindOf } from '../sources/auth/index.ts';
import { fetchUrlOf } from '../sources/fetch-url.ts';
import { formatDuration } from './duration.ts';
import { isPrivateHost, matchesHostEntry } from './fleet-hosts.ts';
import type { FleetPolicy } from './fleet-policy.ts';
import type { Reached } from './reach.ts';
import type { PollerConfig } from './schema.ts';
import { formatSize } from './size.ts';

/**
 * What a runtime poller's validated config reaches beyond FLEET_POLICY: one message per
 * refusal, naming the config key and the policy entry
 * (`source.service: the binding "SELF" is not in FLEET_POLICY.bindings`). Checked at PUT and
 * again each time the poller is wired, so a tightened policy applies without a PUT.
 */
export function reachProblems(poller: string, config: PollerConfig, policy: FleetPolicy): string[] {
  const problems = reachedProblems(reachOf(poller, config), policy);
  problems.push(...capProblems(config, policy));
  return problems;
}

/**
 * Everything a config reaches outside the Worker: its source's URLs (the endpoints beside the
 * main one are sent the source's credentials too: the schema keeps them on source.url's
 * origin, and each is checked all the same, and named, on its own), its service binding,
 * and what its source.auth kind and delivery kind declare (a token endpoint, a webhook URL,
 * a queue, a handler).
 */
export function reachOf(poller: string, config: PollerConfig): Reached[] {
  const { source } = config;
  const reach: Reached[] = [{ what: 'url', key: 'source.url', url: source.url }];
  const beside: [string, string | undefined][] = [
    ['source.deletions.url', source.deletions?.url],
    ['source.children.url', source.children?.url],
    ['reconcile.url', config.reconcile?.url],
    ['reconcile.fetch', fetchUrlOf(config.reconcile?.fetch)?.replaceAll('{id}', 'id')],
  ];
  for (const [key, url] of beside) if (url !== undefined) reach.push({ what: 'url', key, url });
  if (source.auth !== undefined) reach.push(...authKindOf(source.auth).reach(source.auth));
  if (source.service !== undefined) {
    reach.push({ what: 'binding', key: 'source.service', name: source.service, noun: 'binding' });
  }
  reach.push(...kindOf(config.deliver).reach(config.deliver, poller));
  return reach;
}

/**
 * What of `reach` FLEET_POLICY does not allow, one message per refusal naming the key and the
 * policy entry: the one check of every entry, whatever module declared it.
 */
export function reachedProblems(reach: readonly Reached[], policy: FleetPolicy): string[] {
  return reach.flatMap((entry) => {
    const problem = reachedProblem(entry, policy);
    return problem === undefined ? [] : [problem];
  });
}

function reachedProblem(entry: Reached, policy: FleetPolicy): string | undefined {
  switch (entry.what) {
    case 'url':
      return urlProblem(entry.key, entry.url, policy);
    case 'binding':
      return policy.bindings.includes(entry.name)
        ? undefined
        : `${entry.key}: the ${entry.noun} "${entry.name}" is not in FLEET_POLICY.bindings`;
    case 'handler': {
      if (policy.handlers.includes(entry.name)) return undefined;
      const which = entry.implicit ? " (the poller's name: deliver.name is not set)" : '';
      return `${entry.key}: the handler "${entry.name}"${which} is not in FLEET_POLICY.handlers`;
    }
    default: {
      // A `what` this check does not know (a list built outside the types): refused, never passed.
      const unknown: never = entry;
      const { key, what } = unknown as { key?: unknown; what?: unknown };
      return `${String(key)}: reaches a ${String(what)}, which FLEET_POLICY has no entry for`;
    }
  }
}

/**
 * What a runtime config sets above FLEET_POLICY's caps: a body read whole, a run's budget of
 * requests, a request's timeout. A key left at its default is held to the cap too (the cap
 * may be lower than the default): the message says what to set it to.
 */
function capProblems(config: PollerConfig, policy: FleetPolicy): string[] {
  const caps: [
    key: string,
    value: number,
    entry: string,
    cap: number,
    shown: (n: number) => string,
  ][] = [
    ['source.max_body', config.source.max_body, 'max_body', policy.max_body, formatSize],
    ['max_subrequests', config.max_subrequests, 'max_subrequests', policy.max_subrequests, String],
    ['source.timeout', config.source.timeout, 'max_timeout', policy.max_timeout, formatDuration],
    ['deliver.timeout', config.deliver.timeout, 'max_timeout', policy.max_timeout, formatDuration],
  ];
  return caps
    .filter(([, value, , cap]) => value > cap)
    .map(
      ([key, value, entry, cap, shown]) =>
        `${key}: ${shown(value)} is above FLEET_POLICY.${entry} (${shown(cap)}): set it to at most ${shown(cap)}`,
    );
}

/** Why `url` (at `key`) is out of the policy's reach, or undefined. */
function urlProblem(key: string, url: string, policy: FleetPolicy): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${key}: not a URL`;
  }
  if (parsed.protocol === 'http:' && !policy.allow_http) {
    return `${key}: http:// is refused by FLEET_POLICY.allow_http = false (its headers and secrets would travel in clear): use https://`;
  }
  const host = parsed.hostname;
  if (policy.hosts !== undefined) {
    if (policy.hosts.some((entry) => matchesHostEntry(host, entry))) return undefined;
    return `${key}: the host "${host}" is not in FLEET_POLICY.hosts`;
  }
  if (isPrivateHost(host)) {
    return `${key}: the host "${host}" is not a public host (FLEET_POLICY.hosts is not set: only public hosts are allowed)`;
  }
  return undefined;
}
