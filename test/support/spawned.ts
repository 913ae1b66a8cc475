/**
 * The options of a test that spawns npm, node or wrangler in a child process: a second or
 * three on an idle machine, past vitest's default 5 s on a busy one (two suites at once, a CI
 * runner shared with others). Its timeout fits the processes it starts, not the default.
 */
export const SPAWNS_PROCESSES = { timeout: 30_000 };
