import type { SourceConfig } from '../config/schema.ts';
import { readPath } from './dot-path.ts';

/**
 * Whether a record the stream shows is a tombstone (`source.deleted`, R15): with `equals`,
 * when the value at `path` is exactly that (Zendesk's `status = "deleted"`); without, when
 * the value at `path` is there and not null or false (a `deleted_at` time, HubSpot's
 * `archived = true`). Null without a `source.deleted`: the stream shows no deletes.
 */
export function tombstoneRule(config: SourceConfig): ((record: unknown) => boolean) | null {
  const rule = config.deleted;
  if (rule === undefined) return null;
  if (rule.equals !== undefined) {
    const { equals } = rule;
    return (record) => readPath(record, rule.path) === equals;
  }
  return (record) => {
    const value = readPath(record, rule.path);
    return value !== undefined && value !== null && value !== false;
  };
}
