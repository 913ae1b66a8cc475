/** Reads `a.b.c` from a JSON value; "" is the value itself. Undefined when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  if (path === '') return value;
  // Read twice per record (id, updated_at): a plain key needs no split.
  if (!path.includes('.')) {
    return value !== null && typeof value === 'object'
      ? (value as Record<string, unknown>)[path]
      : undefined;
  }
  let node: unknown = value;
  for (const step of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}
