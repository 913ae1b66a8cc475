/**
 * How often the registry hears from a running poller, and how late a report may come before
 * the poller counts as overdue: lists read their lag from the first, and the watchdog visits a
 * runtime poller first once it is overdue (registry/overdue.ts), which is how a lost alarm is
 * found within REPORT_EVERY + one of the poller's intervals + REPORT_GRACE + one watchdog tick
 * of its last report, at any fleet size.
 */

/**
 * A running poller reports at its first run once this has passed since its last report,
 * whatever moved (a heartbeat), and at once when its state, dead letters or health change.
 * Why 15 minutes: each report is a Durable Object request ($0.15 per million) and a registry
 * row written ($1 per million; two with its entry in the overdue index): 2,880 a month at this
 * pace, about $0.006 of the $0.06 an idle poller may cost a month (issue #23). Every 5 minutes
 * would triple that; the price of the longer beat is that a lost alarm is found later (the
 * bound above).
 */
export const REPORT_EVERY_MS = 15 * 60_000;

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
