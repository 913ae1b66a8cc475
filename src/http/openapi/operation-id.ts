/**
 * An operation's id, from its method and path, for clients generated from /openapi.json:
 * `PUT /pollers/{name}` is `putPollersByName`, `POST /pollers/{name}/dead-letters/{key}/replay`
 * is `postPollersByNameDeadLettersByKeyReplay`, `GET /` is `getRoot`. Derived rather than
 * written by hand, so that every route has one, and two routes never share one (a method and
 * a path name one route).
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment)?.[1];
      return param === undefined ? capitalized(segment) : `By${capitalized(param)}`;
    });
  return method.toLowerCase() + (words.length === 0 ? 'Root' : words.join(''));
}

/** `dead-letters` as `DeadLetters`, `openapi.json` as `OpenapiJson`. */
function capitalized(segment: string): string {
  return segment
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
