import { civilFromMs, DAY_MS, daysInMonth, msFromCivil } from './calendar.ts';
import type { TimeZone } from './time-zone.ts';

/**
 * Time patterns in the letters of Java's DateTimeFormatter (what Jira, Salesforce and most
 * API docs write): `yyyy MM dd HH mm ss SSS`, `X`/`XX`/`XXX` for the offset, text in single
 * quotes (`'T'`; `''` is a quote itself), and any other character that is not a letter as
 * it is. Every field has its fixed width, so a pattern reads back exactly what it wrote.
 */
export interface TimePattern {
  /** The unit of its smallest field, in ms: every time it writes is floored to it. */
  readonly precision: number;
  /** It writes the offset (`X`): its times then denote instants whatever the zone. */
  readonly withOffset: boolean;
  /** The wall-clock time of an instant in `zone`, floored to the pattern's precision. */
  format(at: number, zone: TimeZone): string;
  /** The instant a text in the pattern denotes (in `zone` without an offset), or undefined. */
  parse(text: string, zone: TimeZone): number | undefined;
}

type Field = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'ms';
type Part =
  | { kind: 'text'; text: string }
  | { kind: 'field'; token: string; field: Field; width: number; unit: number }
  | { kind: 'offset'; letters: number };

const FIELDS: Record<string, { field: Field; width: number; unit: number }> = {
  yyyy: { field: 'year', width: 4, unit: DAY_MS },
  MM: { field: 'month', width: 2, unit: DAY_MS },
  dd: { field: 'day', width: 2, unit: DAY_MS },
  HH: { field: 'hour', width: 2, unit: 3_600_000 },
  mm: { field: 'minute', width: 2, unit: 60_000 },
  ss: { field: 'second', width: 2, unit: 1000 },
  SSS: { field: 'ms', width: 3, unit: 1 },
};
const LETTERS = 'yyyy MM dd HH mm ss SSS, and X, XX or XXX for the offset';
/** A field needs the next larger one: a pattern's time is a prefix of the day's hour, minute, second. */
const NEEDS: [string, string][] = [
  ['mm', 'HH'],
  ['ss', 'mm'],
  ['SSS', 'ss'],
];

const compiled = new Map<string, TimePattern | { error: string }>();

/** The pattern of a `time_format` or `updated_at_format`, compiled once; or why it is not one. */
export function compilePattern(pattern: string): TimePattern | { error: string } {
  let known = compiled.get(pattern);
  if (known === undefined) {
    known = compile(pattern);
    compiled.set(pattern, known);
  }
  return known;
}

function compile(pattern: string): TimePattern | { error: string } {
  const parts = tokenize(pattern);
  if ('error' in parts) return parts;
  const seen = new Set<string>();
  let offsets = 0;
  let precision = Number.POSITIVE_INFINITY;
  for (const part of parts) {
    if (part.kind === 'offset') offsets += 1;
    if (part.kind !== 'field') continue;
    if (seen.has(part.token)) return { error: `has ${part.token} twice` };
    seen.add(part.token);
    precision = Math.min(precision, part.unit);
  }
  if (offsets > 1) return { error: 'has more than one offset (X)' };
  if (!seen.has('yyyy') || !seen.has('MM') || !seen.has('dd')) {
    return { error: 'needs yyyy, MM and dd: a whole date' };
  }
  for (const [token, larger] of NEEDS) {
    if (seen.has(token) && !seen.has(larger)) return { error: `has ${token} without ${larger}` };
  }
  return {
    precision,
    withOffset: offsets > 0,
    format: (at, zone) => format(parts, at, zone),
    parse: (text, zone) => parse(parts, text, zone),
  };
}

const isLetter = (char: string) => (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z');

function tokenize(pattern: string): Part[] | { error: string } {
  const parts: Part[] = [];
  const text = (value: string) => {
    const last = parts.at(-1);
    if (last?.kind === 'text') last.text += value;
    else parts.push({ kind: 'text', text: value });
  };
  let at = 0;
  while (at < pattern.length) {
    const char = pattern[at] ?? '';
    if (char === "'") {
      if (pattern[at + 1] === "'") {
        text("'");
        at += 2;
        continue;
      }
      let quoted = '';
      at += 1;
      for (;;) {
        if (at >= pattern.length)
          return { error: "has a quote that is not closed (write '' for a quote itself)" };
        if (pattern[at] === "'") {
          if (pattern[at + 1] !== "'") break;
          quoted += "'";
          at += 2;
          continue;
        }
        quoted += pattern[at];
        at += 1;
      }
      text(quoted);
      at += 1;
      continue;
    }
    if (!isLetter(char)) {
      text(char);
      at += 1;
      continue;
    }
    let end = at;
    while (pattern[end] === char) end += 1;
    const token = pattern.slice(at, end);
    at = end;
    const field = FIELDS[token];
    if (field !== undefined) parts.push({ kind: 'field', token, ...field });
    else if (token === 'X' || token === 'XX' || token === 'XXX') {
      parts.push({ kind: 'offset', letters: token.length });
    } else if ('yMdHmsSX'.includes(char)) {
      return {
        error: `has "${token}", which is not a field (the fields: ${LETTERS}; quote other text, as 'T')`,
      };
    } else {
      return {
        error: `has an unknown letter "${char}" (the fields: ${LETTERS}; quote other text, as 'T')`,
      };
    }
  }
  return parts;
}

const pad = (value: number, width: number) => String(value).padStart(width, '0');

function format(parts: Part[], at: number, zone: TimeZone): string {
  const offset = zone.offsetAt(at);
  const wall = civilFromMs(at + offset);
  let out = '';
  for (const part of parts) {
    if (part.kind === 'text') out += part.text;
    else if (part.kind === 'field') out += pad(wall[part.field], part.width);
    else out += offsetText(offset, part.letters);
  }
  return out;
}

/** `X`: `Z`, `-08` or `+0530`; `XX`: `Z` or `-0800`; `XXX`: `Z` or `-08:00`. */
function offsetText(offset: number, letters: number): string {
  if (offset === 0) return 'Z';
  const minutes = Math.trunc(Math.abs(offset) / 60_000);
  const hours = pad(Math.floor(minutes / 60), 2);
  const rest = pad(minutes % 60, 2);
  const sign = offset < 0 ? '-' : '+';
  if (letters === 1) return `${sign}${hours}${rest === '00' ? '' : rest}`;
  return letters === 2 ? `${sign}${hours}${rest}` : `${sign}${hours}:${rest}`;
}

const ZERO = 48;
function digits(text: string, from: number, count: number): number {
  if (from + count > text.length) return Number.NaN;
  let n = 0;
  for (let i = from; i < from + count; i += 1) {
    const d = text.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
}

function parse(parts: Part[], text: string, zone: TimeZone): number | undefined {
  const wall = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0 };
  let offset: number | undefined;
  let at = 0;
  for (const part of parts) {
    if (part.kind === 'text') {
      if (!text.startsWith(part.text, at)) return undefined;
      at += part.text.length;
    } else if (part.kind === 'field') {
      const value = digits(text, at, part.width);
      if (Number.isNaN(value)) return undefined;
      wall[part.field] = value;
      at += part.width;
    } else {
      const read = readOffset(text, at);
      if (read === undefined) return undefined;
      offset = read.offset;
      at = read.end;
    }
  }
  if (at !== text.length) return undefined;
  if (wall.month < 1 || wall.month > 12 || wall.day < 1) return undefined;
  if (wall.day > daysInMonth(wall.year, wall.month)) return undefined;
  if (wall.hour > 23 || wall.minute > 59 || wall.second > 59) return undefined;
  const local = msFromCivil(wall);
  return offset === undefined ? zone.instantOf(local) : local - offset;
}

/** An offset in any of X's forms (`Z`, `±HH`, `±HHMM`, `±HH:MM`), whichever the pattern wrote. */
function readOffset(text: string, at: number): { offset: number; end: number } | undefined {
  if (text[at] === 'Z') return { offset: 0, end: at + 1 };
  const sign = text[at] === '+' ? 1 : text[at] === '-' ? -1 : 0;
  const hours = digits(text, at + 1, 2);
  if (sign === 0 || Number.isNaN(hours) || hours > 18) return undefined;
  const colon = text[at + 3] === ':' ? 1 : 0;
  const minutes = digits(text, at + 3 + colon, 2);
  if (Number.isNaN(minutes)) {
    return colon === 1 ? undefined : { offset: sign * hours * 3_600_000, end: at + 3 };
  }
  if (minutes > 59) return undefined;
  return { offset: sign * (hours * 60 + minutes) * 60_000, end: at + 5 + colon };
}
