import { isoTime } from '../engine/iso-time.ts';
import type { Json, MalformedRecord, Update } from '../engine/ports.ts';

/** A record as a preview shows it: this many bytes of its JSON at most. */
export const RECORD_SHOWN_BYTES = 2048;

/** One record a preview read, as a run would see it. */
export interface PreviewRecord {
  /** Null for a record the source cannot read (see `malformed`). */
  id: string | null;
  /** The version as epoch time, in ISO 8601 (null: unreadable). */
  updated_at: string | null;
  /** The version exactly as the upstream wrote it. */
  version: string | null;
  /** A tombstone (`source.deleted`): a run would deliver it as a delete. */
  delete: boolean;
  /** The record; null when it is shown cut, as `record_text`. */
  record: Json | null;
  /** The first RECORD_SHOWN_BYTES of a larger record's JSON. */
  record_text?: string;
  /** The size of a record's JSON, when it is shown cut. */
  record_bytes?: number;
  /** Why the source cannot read it: a run would make it a dead letter (R8). */
  malformed?: string;
}

/** A record read, or one the source cannot read, as the preview answers it. */
export function recordView(
  read: Update | MalformedRecord,
  isDeleted: ((record: unknown) => boolean) | null | undefined,
): PreviewRecord {
  if ('reason' in read) {
    return {
      id: null,
      updated_at: null,
      version: null,
      delete: false,
      ...shown(read.raw),
      malformed: read.reason,
    };
  }
  return {
    id: read.id,
    updated_at: isoTime(read.versionMs),
    version: read.version,
    delete: isDeleted?.(read.record) ?? false,
    ...shown(read.record),
  };
}

/** The record itself when its JSON fits RECORD_SHOWN_BYTES, else the start of that JSON. */
function shown(record: unknown): Pick<PreviewRecord, 'record' | 'record_text' | 'record_bytes'> {
  const text = JSON.stringify(record) ?? 'null';
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= RECORD_SHOWN_BYTES) return { record: JSON.parse(text) as Json };
  // Cut on a character, never inside one: the decoder drops a partial one at the end.
  const cut = new TextDecoder().decode(bytes.slice(0, RECORD_SHOWN_BYTES)).replace(/\uFFFD$/, '');
  return { record: null, record_text: cut, record_bytes: bytes.byteLength };
}
