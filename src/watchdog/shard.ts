import { WorkerEntrypoint } from 'cloudflare:workers';
import type { WatchdogEntry } from '../registry/registry.ts';
import { type VisitFindings, visitAll } from './visit.ts';

/**
 * One share of a watchdog tick's visits, in an invocation of its own: the cron's invocation
 * calls it through `ctx.exports` once per group of SHARD_VISITS pollers, so each group has
 * its own subrequests and connections, and a tick visits as many pollers as the round needs
 * at any fleet size. Not reachable from outside: it is an entrypoint, not a route.
 */
export class WatchdogShard extends WorkerEntrypoint<Env> {
  async visit(entries: WatchdogEntry[]): Promise<VisitFindings> {
    return visitAll(
      this.env,
      entries.map((entry) => ({ name: entry.name, entry })),
    );
  }
}
