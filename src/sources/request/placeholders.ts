import type { Window } from '../../engine/window.ts';
import { readPath } from '../dot-path.ts';
import { formatTime, type TimeFormat } from '../time.ts';

/**
 * The window placeholders `{from}` and `{to}`: the window's bounds, in `source.time_format`,
 * inside `url`, `params` values and every string of `body`. Only these two names, written
 * exactly so, are placeholders: a GraphQL query (`nodes { id }`, `{ from }`) is never altered.
 * `{{from}}` and `{{to}}` write a literal `{from}` and `{to}`; any other `{{` stays as it is.
 * `source.children` adds `{parent.<dot path>}`: a value of the parent record whose children
 * are asked for (`{{parent.key}}` is a literal).
 */

/** A placeholder's name. */
export type BoundName = 'from' | 'to';

/**
 * `{{from}}` (a literal) or `{from}` (a placeholder), the same for `to`, and
 * `{parent.<dot path>}` (group 3: its path) with its literal.
 */
const PLACEHOLDER = /\{\{(from|to|parent\.[^{}\s]+)\}\}|\{(from|to)\}|\{parent\.([^{}\s]+)\}/g;

/** A window's bounds as the upstream is sent them. */
export interface Bounds {
  from: string;
  /**
   * The window's end. A source that uses `{to}` always has bounded windows
   * (sendsWindowEnd); an open window's end is T, which only `to_param` leaves unsent.
   */
  to: string;
  /** Whether a body string that is exactly a placeholder becomes a JSON number. */
  numeric: boolean;
  /** source.children: the parent record whose children are asked for ({parent.…}). */
  parent?: unknown;
}

/**
 * A `{parent.<path>}` whose parent record holds no string, number or boolean there, or whose
 * values would change which path of the children's URL is asked for (`.` or `..` as a path
 * segment, which a URL parser takes as a dot segment however it is encoded).
 */
export class MissingParentValue extends Error {
  constructor(path: string, message?: string) {
    super(message ?? `the parent record has no value at "${path}" for {parent.${path}}`);
  }
}

/** The scheme and authority of a URL's text: where no placeholder may go (config/children.ts). */
const ORIGIN_TEXT = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*/i;
/** `.` or `..`, as written or percent-encoded: what a URL parser removes from a path. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** How many of the path segments of a URL's text are dot segments. */
function dotSegments(url: string): number {
  const origin = ORIGIN_TEXT.exec(url)?.[0].length ?? 0;
  const path = url.slice(origin).split(/[?#]/, 1)[0] ?? '';
  return path.split(/[/\\]/).filter((segment) => DOT_SEGMENT.test(segment)).length;
}

/**
 * The children's URL with its parent's values in it (percent-encoded): throws
 * MissingParentValue when a value would turn a path segment into `.` or `..`, so that a
 * record never chooses which path (with the source's credentials) is asked for.
 */
export function renderParentUrl(template: string, bounds: Bounds): string {
  let url: string;
  try {
    url = renderText(template, bounds, encodeURIComponent);
  } catch (error) {
    // A lone surrogate has no UTF-8 form to percent-encode.
    if (!(error instanceof URIError)) throw error;
    const paths = parentPaths(template).join('", "');
    throw new MissingParentValue(
      paths,
      `the parent record's value at "${paths}" is not well-formed text (a lone surrogate) and cannot go in a URL`,
    );
  }
  if (dotSegments(url) > dotSegments(template)) {
    const paths = parentPaths(template).join('", "');
    throw new MissingParentValue(
      paths,
      `the parent record's value at "${paths}" would change which path of the children's URL is asked for ("." or ".." as a path segment)`,
    );
  }
  return url;
}

/**
 * The window's bounds, rendered: the one place a bound is formatted for the upstream (the
 * query parameters, the placeholders and the body all take it from here).
 */
export function windowBounds(window: Window, format: TimeFormat, zone = 'UTC'): Bounds {
  return {
    from: formatTime(window.from, format, zone),
    to: formatTime(window.to, format, zone),
    numeric: format === 'unix' || format === 'unix_ms',
    ...(window.parent === undefined ? {} : { parent: window.parent.record }),
  };
}

/**
 * `text` with each placeholder replaced by its bound, passed through `encode` (a URL's
 * percent-encoding); `{{from}}` becomes `{from}`. A string without either name comes back as
 * it is, the same string.
 */
export function renderText(
  text: string,
  bounds: Bounds,
  encode: (value: string) => string = (value) => value,
): string {
  if (!text.includes('{from}') && !text.includes('{to}') && !text.includes('{parent.')) {
    return text;
  }
  return text.replace(PLACEHOLDER, (whole, literal?: string, name?: string, path?: string) => {
    if (literal !== undefined) return `{${literal}}`;
    if (path !== undefined) {
      // Outside source.children there is no parent: the text is left as it is.
      return 'parent' in bounds ? encode(parentValue(bounds.parent, path)) : whole;
    }
    return encode(boundOf(bounds, name as BoundName));
  });
}

/**
 * A copy of `body` with its strings rendered; a string that is exactly `"{from}"` or
 * `"{to}"` becomes a JSON number with a unix time format. Objects and arrays without a
 * placeholder come back as they are (not copied).
 */
export function renderBody(body: unknown, bounds: Bounds): unknown {
  if (typeof body === 'string') {
    const whole = body === '{from}' ? 'from' : body === '{to}' ? 'to' : null;
    if (whole !== null && bounds.numeric) return Number(boundOf(bounds, whole));
    // A string that is exactly `{parent.<path>}` keeps the parent value's JSON type.
    const path = /^\{parent\.([^{}\s]+)\}$/.exec(body)?.[1];
    if (path !== undefined && 'parent' in bounds) {
      const value = readPath(bounds.parent, path);
      if (typeof value === 'number' || typeof value === 'boolean') return value;
    }
    return renderText(body, bounds);
  }
  if (Array.isArray(body)) {
    const items = body.map((item) => renderBody(item, bounds));
    return items.every((item, index) => item === body[index]) ? body : items;
  }
  if (body !== null && typeof body === 'object') {
    let changed = false;
    const entries = Object.entries(body).map(([key, item]) => {
      const rendered = renderBody(item, bounds);
      if (rendered !== item) changed = true;
      return [key, rendered] as const;
    });
    return changed ? Object.fromEntries(entries) : body;
  }
  return body;
}

/** The parent's value at `path`, as text; throws MissingParentValue when it has none. */
function parentValue(parent: unknown, path: string): string {
  const value = readPath(parent, path);
  // An empty string is no value: `/issue//comment` would ask another endpoint.
  if (
    (typeof value === 'string' && value !== '') ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  ) {
    return String(value);
  }
  throw new MissingParentValue(path);
}

/** The dot paths of the `{parent.…}` placeholders in `text` (not its `{{parent.…}}` literals). */
export function parentPaths(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].flatMap((match) => (match[3] ? [match[3]] : []));
}

/** The dot paths of `{parent.…}` in every string of `value` (a body, a params table). */
export function parentPathsIn(value: unknown): string[] {
  if (typeof value === 'string') return parentPaths(value);
  if (Array.isArray(value)) return value.flatMap(parentPathsIn);
  if (value !== null && typeof value === 'object')
    return Object.values(value).flatMap(parentPathsIn);
  return [];
}

function boundOf(bounds: Bounds, name: BoundName): string {
  return name === 'from' ? bounds.from : bounds.to;
}

/** Whether `{name}` is used (as a placeholder, not a `{{name}}` literal) in `text`. */
export function usesPlaceholder(text: string, name: BoundName): boolean {
  for (const match of text.matchAll(PLACEHOLDER)) if (match[2] === name) return true;
  return false;
}

/** Whether `{name}` is used in any string of `value` (a body, a params table). */
export function usesPlaceholderIn(value: unknown, name: BoundName): boolean {
  if (typeof value === 'string') return usesPlaceholder(value, name);
  if (Array.isArray(value)) return value.some((item) => usesPlaceholderIn(item, name));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).some((item) => usesPlaceholderIn(item, name));
  }
  return false;
}

/** Whether a header value can hold `text`: no line break, no NUL, nothing beyond Latin-1. */
function headerSafe(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0 || code === 10 || code === 13 || code > 0xff) return false;
  }
  return true;
}

/**
 * A header value of a child request, its parent's values in it: throws MissingParentValue
 * (the parent becomes a dead letter) when a value could not be sent in a header, instead of
 * failing the request (every run, with the value in its error).
 */
export function renderParentHeader(value: string, bounds: Bounds): string {
  const rendered = renderText(value, bounds);
  if (rendered === value || headerSafe(rendered)) return rendered;
  const paths = parentPaths(value).join('", "');
  throw new MissingParentValue(
    paths,
    `the parent record's value at "${paths}" cannot be sent in a header (a line break, NUL or a character beyond Latin-1)`,
  );
}
