import type { Authorize, Authorizer, Credential } from './authorizer.ts';

/** Why a request could not be sent with source.auth's credential (no token, reconnect needed…). */
export type AuthFailure = Extract<Credential, { ok: false }>;

/** A request sent as it is: no source.auth. */
const asItIs: Authorize = async (request) => request;

/**
 * Sends one request to the source's origin authorized by source.auth: `send` builds each
 * request (each redirect hop too) and passes it through `authorize`, which sets the
 * credential as its kind says (a header, a query parameter, a signature). A 401 to a
 * credential that can be renewed (oauth2, jwt_bearer) renews it once and sends the request
 * again; a second 401 stands. Every request that carries it goes through here: the stream's
 * and the listing's pages (HttpSource) and reconcile.fetch alike. `responseOf` finds the
 * response in what `send` gives (null: none, a timeout say).
 */
export async function sendAuthorized<T>(
  auth: Authorizer | undefined,
  send: (authorize: Authorize) => Promise<T>,
  responseOf: (sent: T) => Response | null,
): Promise<{ ok: true; sent: T } | AuthFailure> {
  if (auth === undefined) return { ok: true, sent: await send(asItIs) };
  const credential = await auth.credential();
  if (!credential.ok) return credential;
  const sent = await send(credential.authorize);
  const response = responseOf(sent);
  if (response?.status !== 401) return { ok: true, sent };
  const again = await auth.renewAfter401(credential.value);
  if (again === null) return { ok: true, sent };
  await response.body?.cancel().catch(() => undefined);
  if (!again.ok) return again;
  return { ok: true, sent: await send(again.authorize) };
}
