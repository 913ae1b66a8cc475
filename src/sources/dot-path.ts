/** Reads `a.b.c` from a JSON value; "" is the value itself. Undefined when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  if (path === '') return value;
  let node: unknown = value;
  for (const step of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}
