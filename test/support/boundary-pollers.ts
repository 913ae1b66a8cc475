import { TEST_POLLERS } from './pollers.ts';

/**
 * Pollers for the delivery-boundary tests (timeouts), merged into POLLERS by
 * vitest.config.ts. Their cron is one no test dispatches, so they only run when a test
 * drives them.
 */
export const BOUNDARY_POLLERS = {
  /** As in the issue: max_run 1m and lease_ttl 2m; deliveries time out after 250ms. */
  slow_handler: {
    cron: '*/10 * * * *',
    max_run: '1m',
    lease_ttl: '2m',
    source: TEST_POLLERS.handled.source,
    deliver: { type: 'handler', name: 'demo-sessions', timeout: '250ms' },
  },
  /** Queue delivery whose consumer gives the handler 250ms. */
  slow_queue: {
    cron: '*/10 * * * *',
    source: TEST_POLLERS.queued.source,
    deliver: { type: 'queue', binding: 'DELIVERY_QUEUE', name: 'demo-sessions', timeout: '250ms' },
  },
};
