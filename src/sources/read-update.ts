import type { SourceConfig } from '../config/schema.ts';
import { hash53 } from '../engine/idempotency.ts';
import type { MalformedRecord, Update } from '../engine/ports.ts';
import { canonicalJson } from '../engine/unchanged.ts';
import { readPath } from './dot-path.ts';
import { parseTimestamp } from './time.ts';

const FORMATS: Record<string, string> = {
  auto: 'an ISO 8601 time or epoch number',
  iso: 'an ISO 8601 time (updated_at_format = "iso")',
  iso_seconds: 'an ISO 8601 time (updated_at_format = "iso_seconds")',
  unix: 'epoch seconds (updated_at_format = "unix")',
  unix_ms: 'epoch milliseconds (updated_at_format = "unix_ms")',
};

/** Turns one upstream record into an update, or says why it cannot be read. */
export function readUpdate(record: unknown, config: SourceConfig): Update | MalformedRecord {
  const id = readPath(record, config.id);
  if (typeof id !== 'string' && typeof id !== 'number') {
    return { reason: `no id at "${config.id}"`, raw: record };
  }
  if (typeof id === 'string' && id === '')
    return { reason: `empty id at "${config.id}"`, raw: record };
  // A listing without reconcile.updated_at: ids only, every one at no known version.
  if (config.updated_at === '') return { id: String(id), version: '', versionMs: 0, record };
  // A resume round without updated_at: the version is the content (one hash per content), so
  // a record listed unchanged in two rounds has one idempotency key and is delivered once.
  if (config.updated_at === undefined && config.resume !== undefined) {
    return { id: String(id), version: contentVersion(record), versionMs: 0, record };
  }
  const stamp = config.updated_at ?? 'updated_at';
  const updatedAt = readPath(record, stamp);
  const versionMs = parseTimestamp(updatedAt, config.updated_at_format, config.time_zone);
  if (versionMs === undefined || (typeof updatedAt !== 'string' && typeof updatedAt !== 'number')) {
    return {
      reason: `id ${String(id)}: updated_at at "${stamp}" is ${JSON.stringify(updatedAt) ?? 'missing'}, not ${FORMATS[config.updated_at_format] ?? `a time in the pattern "${config.updated_at_format}" (updated_at_format)`}`,
      raw: record,
    };
  }
  return { id: String(id), version: String(updatedAt), versionMs, record };
}

export function isUpdate(value: Update | MalformedRecord): value is Update {
  return 'id' in value;
}

/** The version of a record without updated_at: a hash of its canonical JSON. */
export function contentVersion(record: unknown): string {
  return `#${hash53(canonicalJson(record))}`;
}
