/**
 * Where two JSON values differ, as paths (`source.params.tenant`, `labels`, `deliver.url`):
 * empty when they are deep-equal. Keys are compared as sets (their order in a file is not a
 * change); arrays item by item. Paths only, never values: a config's values can be long, and
 * a plan is printed in CI logs.
 */
export function changedPaths(before: unknown, after: unknown, path = ''): string[] {
  if (Object.is(before, after)) return [];
  const here = path === '' ? '(the whole config)' : path;
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length) return [here];
    return before.flatMap((item, index) => changedPaths(item, after[index], `${path}[${index}]`));
  }
  if (isTable(before) && isTable(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const inBefore = Object.hasOwn(before, key);
      const inAfter = Object.hasOwn(after, key);
      const at = path === '' ? key : `${path}.${key}`;
      if (inBefore !== inAfter) return [at];
      return changedPaths(before[key], after[key], at);
    });
  }
  return [here];
}

function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
