import type { Json } from '../engine/ports.ts';

/** Records nested deeper than this are kept and served as text (see readRecord). */
export const MAX_RECORD_DEPTH = 64;

/** Records larger than this (UTF-8 bytes of their JSON) are kept and served as text. */
export const MAX_RECORD_BYTES = 256 * 1024;

/**
 * A record as stored: its JSON text. Never recursive, whatever the record: a record nested
 * more than MAX_RECORD_DEPTH levels is written by an explicit stack, so a hostile upstream
 * cannot overflow the call stack of the run that keeps it (the record then stays a failing
 * update or a dead letter, as any other).
 */
export function recordToText(record: unknown): string {
  if (depthOf(record, MAX_RECORD_DEPTH + 1) <= MAX_RECORD_DEPTH) {
    return JSON.stringify(record) ?? 'null';
  }
  return stringifyDeep(record);
}

/** A stored record as the admin API shows it: parsed, or left as text with the reason. */
export type ReadRecord = { ok: true; record: Json } | { ok: false; text: string; note: string };

/**
 * Reads a stored record. One nested deeper than MAX_RECORD_DEPTH, or larger than
 * MAX_RECORD_BYTES, is not parsed: it goes out as its text, with a note saying why, so that
 * no copy of it (the Durable Object's RPC, the JSON response) recurses through it or holds
 * it twice. `bytes` is the stored size when the caller has it (SQLite's octet_length).
 */
export function readRecord(text: string, bytes = utf8Length(text)): ReadRecord {
  if (bytes > MAX_RECORD_BYTES) {
    return {
      ok: false,
      text,
      note: `the record is ${bytes} bytes, more than ${MAX_RECORD_BYTES}: shown as its JSON text`,
    };
  }
  const depth = textDepth(text);
  if (depth > MAX_RECORD_DEPTH) return { ok: false, text, note: tooDeep(depth) };
  return { ok: true, record: JSON.parse(text) as Json };
}

/** Why a record this deep is kept as text and not replayed. */
export function tooDeep(depth: number): string {
  return `the record is nested ${depth} levels deep, more than ${MAX_RECORD_DEPTH}: shown as its JSON text, and not replayed (no receiver is expected to take it; fix it upstream, then discard it)`;
}

/** How deeply a JSON text nests, counted without parsing it (strings skipped). */
export function textDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c)
        i += 1; // backslash: the next character is escaped
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x7d || char === 0x5d) depth -= 1;
  }
  return deepest;
}

/** How deeply a value nests (objects and arrays), counting no further than `stop`. */
function depthOf(value: unknown, stop: number): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest >= stop) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * JSON.stringify's output for a JSON value (what the source parsed), by an explicit stack
 * instead of recursion: the text is built as a list of pieces, each value pushing its
 * closing bracket before its children (in reverse, so they come out in order).
 */
function stringifyDeep(root: unknown): string {
  const out: string[] = [];
  type Step = { value: unknown; inArray: boolean } | { text: string };
  const steps: Step[] = [{ value: root, inArray: true }];
  for (let step = steps.pop(); step !== undefined; step = steps.pop()) {
    if ('text' in step) {
      out.push(step.text);
      continue;
    }
    const { value, inArray } = step;
    if (value === null || typeof value !== 'object') {
      out.push(scalar(value, inArray));
      continue;
    }
    if (Array.isArray(value)) {
      out.push('[');
      steps.push({ text: ']' });
      for (let i = value.length - 1; i >= 0; i -= 1) {
        steps.push({ value: value[i], inArray: true });
        if (i > 0) steps.push({ text: ',' });
      }
      continue;
    }
    const entries = Object.entries(value).filter(([, child]) => isWritten(child));
    out.push('{');
    steps.push({ text: '}' });
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i] as [string, unknown];
      steps.push({ value: child, inArray: false });
      steps.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` });
    }
  }
  return out.join('');
}

/** A non-object value as JSON.stringify writes it (undefined and functions: null in arrays). */
function scalar(value: unknown, inArray: boolean): string {
  if (!isWritten(value)) return inArray ? 'null' : '';
  return JSON.stringify(value) ?? 'null';
}

function isWritten(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}
