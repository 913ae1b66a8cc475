// The watchdog's sizes, apart from its code so that the benchmarks can read them.

/** Overdue runtime pollers visited per tick, at most, unless WATCHDOG_SLICE says otherwise. */
export const DEFAULT_SLICE = 200;

/**
 * Ticks (minutes) in which the round robin visits every active runtime poller once, unless
 * WATCHDOG_ROUND says otherwise: a lost alarm is found within this many ticks at any fleet
 * size. Why 2: each visit is a Durable Object request ($0.15 per million) that writes nothing
 * when all is well, 21,600 a month per poller at this pace (about $0.003, see the cost model
 * in docs/guarantees.md); every tick would double that and take an idle poller past $0.06.
 */
export const DEFAULT_ROUND = 2;

/**
 * Visits the cron's own invocation makes, unless WATCHDOG_GROUP says otherwise; a larger share
 * goes out in groups of this many, each to a WatchdogShard invocation of its own (its own
 * subrequests and connections). A healthy poller's visit is one subrequest; one that finds a
 * stale config pushes it again, four in all: 200 keeps even a group of those within the 1,000
 * subrequests an invocation may make.
 */
export const SHARD_VISITS = 200;
