import type { PollerConfig } from './schema.ts';

/**
 * Keys the schema accepts (they are the configuration contract) whose behaviour is not
 * built yet. Rather than ignore them silently, a poller that uses one does not run and
 * its status says why.
 */
export function notYetSupported(config: PollerConfig): string[] {
  const errors: string[] = [];
  if (config.deliver.type === 'queue') {
    errors.push('deliver.type: "queue" delivery is not available yet (use "webhook" or "handler")');
  }
  if (config.deliver.batch > 1) {
    errors.push(
      'deliver.batch: batches above 1 are not available yet (each record is one request)',
    );
  }
  return errors;
}
