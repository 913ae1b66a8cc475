import { kindOf } from '../delivery/kinds/index.ts';
import { fetchUrlOf } from '../sources/fetch-url.ts';
import { formatDuration } from './duration.ts';
import { isPrivateHost, matchesHostEntry } from './fleet-hosts.ts';
import type { FleetPolicy } from './fleet-policy.ts';
import type { PollerConfig } from './schema.ts';
import { formatSize } from './size.ts';

/**
 * What a runtime poller's validated config reaches beyond FLEET_POLICY: one message per
 * refusal, naming the config key and the policy entry
 * (`source.service: the binding "SELF" is not in FLEET_POLICY.bindings`). Checked at PUT and
 * again each time the poller is wired, so a tightened policy applies without a PUT.
 */
export function reachProblems(poller: string, config: PollerConfig, policy: FleetPolicy): string[] {
  const problems = [urlProblem('source.url', config.source.url, policy)];
  // The endpoints beside the main one are sent the source's credentials too. The schema keeps
  // them on source.url's origin; each is checked all the same, and named, on its own.
  const beside: [string, string | undefined][] = [
    ['source.deletions.url', config.source.deletions?.url],
    ['reconcile.url', config.reconcile?.url],
    ['reconcile.fetch', fetchUrlOf(config.reconcile?.fetch)?.replaceAll('{id}', 'id')],
  ];
  for (const [key, url] of beside)
    if (url !== undefined) problems.push(urlProblem(key, url, policy));
  // The token endpoint is sent the client's secret and its refresh token.
  const auth = config.source.auth;
  if (auth?.type === 'oauth2')
    problems.push(urlProblem('source.auth.token_url', auth.token_url, policy));
  const { service } = config.source;
  if (service !== undefined && !policy.bindings.includes(service)) {
    problems.push(`source.service: the binding "${service}" is not in FLEET_POLICY.bindings`);
  }
  // What the delivery reaches, as its kind declares it (delivery/kinds/).
  const reach = kindOf(config.deliver).reach(config.deliver, poller);
  for (const { key, url } of reach.urls) problems.push(urlProblem(key, url, policy));
  for (const { key, name } of reach.queues) {
    if (!policy.bindings.includes(name)) {
      problems.push(`${key}: the queue "${name}" is not in FLEET_POLICY.bindings`);
    }
  }
  for (const { key, name, implicit } of reach.handlers) {
    if (policy.handlers.includes(name)) continue;
    const which = implicit ? " (the poller's name: deliver.name is not set)" : '';
    problems.push(`${key}: the handler "${name}"${which} is not in FLEET_POLICY.handlers`);
  }
  problems.push(...capProblems(config, policy));
  return problems.filter((problem): problem is string => problem !== undefined);
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
