/**
 * How often the registry hears from a running poller, and how late a report may come before
 * the poller counts as overdue: lists read their lag from the first, and the watchdog visits a
 * runtime poller first once it is overdue (registry/overdue.ts). A lost alarm is found sooner
 * by the watchdog's round (every runtime poller visited within WATCHDOG_ROUND ticks, see
 * watchdog/index.ts); the overdue queue still heads each tick with the pollers that went
 * silent for another reason (an object that cannot run, or be reached).
 */

/**
 * A running poller reports at its first run once this has passed since its last report,
 * whatever moved (a heartbeat), and at once when its state, dead letters or health change.
 * Why an hour: each report is a Durable Object request ($0.15 per million) and two registry
 * rows written ($1 per million: its row and its entry in the overdue index), 1,440 rows a
 * month at this pace. Every 15 minutes (5,760 rows, $0.006) and the watchdog's round (21,600
 * visits, $0.003) together would take an idle poller past the $0.06 a month of issue #23, and
 * the round finds a lost alarm within minutes, which the heartbeat never could. The price: a
 * list shows a silent poller's lag as fresh for up to an hour (registry/reported-lag.ts).
 */
export const REPORT_EVERY_MS = 60 * 60_000;

/**
 * Slack on the due time a poller sends: the report that renews it leaves at the end of the
 * run its tick started, so the alarm's delivery and a run of ordinary length come first.
 * A run longer than this, or a late alarm, costs one needless watchdog visit, whose report
 * renews it.
 */
export const REPORT_GRACE_MS = 2 * 60_000;

/**
 * How long the watchdog leaves an overdue poller it visited before it counts it as overdue
 * again, if the visit brought no report (an object that cannot run, or cannot be reached):
 * as long as a poller that runs would take to report, so such pollers never crowd out the
 * queue's head.
 */
export const VISIT_AGAIN_MS = REPORT_EVERY_MS + REPORT_GRACE_MS;
