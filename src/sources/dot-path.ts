/**
 * The dot paths of a config (`items`, `id`, `updated_at`, `next.path`, `deleted.path`,
 * `changes_ignore`, …) read JSON bodies and records. A key may itself hold a dot (Microsoft
 * Graph's `@odata.nextLink`, `@odata.etag`), and there is no escaping: at each level, the
 * longest run of the remaining steps that is a key of the object wins, so `"a.b.c"` of
 * `{"a.b": {"c": 1}, "a": {"b": {"c": 2}}}` is 1. A shorter run is never tried once a longer
 * one matched (no backtracking): a path reads one place, predictably.
 */

/**
 * The most steps one key may span (15 dots in it). Real keys hold one or two; the bound keeps
 * a path's runs linear in its length, where a runtime config's 10,000-step path would
 * otherwise be 50 million strings.
 */
export const MAX_KEY_STEPS = 16;

/** A dot path split once: its steps, and every run of them joined back with ".". */
export interface DotPath {
  /** How many steps: a walk that reaches this index has read the whole path. */
  readonly length: number;
  /** `runs[i][j]`: steps i to i + j, joined (built once, so a walk allocates nothing). */
  readonly runs: readonly (readonly string[])[];
}

/** Distinct config paths seen by this isolate: a few per poller, so a bound is only a backstop. */
const MAX_CACHED = 1024;
const compiled = new Map<string, DotPath>();

/** The path split into its steps and their runs, cached: a record read costs a map lookup. */
export function dotPath(path: string): DotPath {
  const known = compiled.get(path);
  if (known !== undefined) return known;
  const steps = path.split('.');
  const runs = steps.map((_, from) => {
    const joined: string[] = [];
    let run = '';
    for (let to = from; to < Math.min(steps.length, from + MAX_KEY_STEPS); to += 1) {
      run = to === from ? (steps[to] ?? '') : `${run}.${steps[to] ?? ''}`;
      joined.push(run);
    }
    return joined;
  });
  if (compiled.size >= MAX_CACHED) compiled.clear();
  const made = { length: steps.length, runs };
  compiled.set(path, made);
  return made;
}

/**
 * How many of the path's steps from `from` the key of `node` they start with spans: the
 * longest run of them that is a key of `node` (its key: `path.runs[from][size - 1]`), or 0
 * when none is.
 */
export function runAt(node: object, path: DotPath, from: number): number {
  const runs = path.runs[from] ?? [];
  let size = runs.length;
  while (size > 0 && !Object.hasOwn(node, runs[size - 1] ?? '')) size -= 1;
  return size;
}

/** Reads a dot path from a JSON value; "" is the value itself. Undefined when nothing is there. */
export function readPath(value: unknown, path: string): unknown {
  if (path === '') return value;
  // Read twice per record (id, updated_at): a plain key is one lookup, with no split.
  if (!path.includes('.')) {
    return value !== null && typeof value === 'object'
      ? (value as Record<string, unknown>)[path]
      : undefined;
  }
  const steps = dotPath(path);
  let node: unknown = value;
  for (let at = 0; at < steps.length; ) {
    if (node === null || typeof node !== 'object') return undefined;
    const size = runAt(node, steps, at);
    if (size === 0) return undefined;
    node = (node as Record<string, unknown>)[steps.runs[at]?.[size - 1] ?? ''];
    at += size;
  }
  return node;
}
