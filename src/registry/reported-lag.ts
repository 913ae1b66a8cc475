import { REPORT_EVERY_MS } from './heartbeat.ts';

/**
 * A poller's lag as the registry lists it, in seconds: the lag it had when it last reported
 * (`reportedAt` minus the checkpoint it reported then), not now minus that checkpoint, which
 * would show a poller ticking every 15 s with 6 s of lag as 15 minutes behind. The lag grows
 * again once the report is older than REPORT_EVERY, when a running poller would have
 * reported again (its heartbeat): a poller that died does not look fresh for longer than that.
 */
export function reportedLagSeconds(
  entry: { checkpoint: number | null; reportedAt: number | null },
  now: number,
): number | null {
  const { checkpoint, reportedAt } = entry;
  if (checkpoint === null) return null;
  const reported = reportedAt === null ? now - checkpoint : reportedAt - checkpoint;
  const overdue = now - checkpoint - REPORT_EVERY_MS;
  return Math.max(0, Math.round(Math.max(reported, overdue) / 1000));
}
