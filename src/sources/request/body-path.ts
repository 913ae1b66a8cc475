/**
 * Writes a paging style's value into a request body at a dot path (`next.param` with
 * `next.in = "body"`: `after`, `variables.after`, `pagination.starting_after`). Keys are found
 * the way a path is read: at each level, the longest run of the remaining steps that is a key
 * of the object wins, so a key with a dot in it (`"page.after"`) is reached as written; a step
 * not there yet is added as an object.
 */

/** A JSON object, as a body's tables are. */
type JsonObject = { [key: string]: unknown };

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A copy of `body` with `value` at `path`: only the objects along the path are copied, the
 * rest is shared. An absent body starts as `{}`. `body` must be an object (the schema says
 * so for `next.in = "body"`); a step that meets a value that is not an object replaces it.
 */
export function writeBodyPath(body: unknown, path: string, value: unknown): JsonObject {
  return write(isObject(body) ? body : {}, path.split('.'), value);
}

function write(object: JsonObject, steps: string[], value: unknown): JsonObject {
  for (let take = steps.length; take >= 1; take -= 1) {
    const key = steps.slice(0, take).join('.');
    if (!Object.hasOwn(object, key)) continue;
    const rest = steps.slice(take);
    if (rest.length === 0) return { ...object, [key]: value };
    const inner = object[key];
    return { ...object, [key]: write(isObject(inner) ? inner : {}, rest, value) };
  }
  const [first, ...rest] = steps as [string, ...string[]];
  return { ...object, [first]: rest.length === 0 ? value : write({}, rest, value) };
}
