import type { AuthHeader, Authorizer } from './authorizer.ts';

/** Why a request could not be sent with source.auth's header (no token, reconnect needed…). */
export type AuthFailure = Extract<AuthHeader, { ok: false }>;

/**
 * Sends one request to the source's origin with source.auth's Authorization header (none
 * without source.auth; `send` sets it). A 401 to a header that can be renewed (oauth2) renews
 * it once and sends the request again; a second 401 stands. Every request that carries the
 * header goes through here: the stream's and the listing's pages (HttpSource) and
 * reconcile.fetch alike. `responseOf` finds the response in what `send` gives (null: none,
 * a timeout say).
 */
export async function sendAuthorized<T>(
  auth: Authorizer | undefined,
  send: (authorization: string | null) => Promise<T>,
  responseOf: (sent: T) => Response | null,
): Promise<{ ok: true; sent: T } | AuthFailure> {
  const credential = auth ? await auth.header() : null;
  if (credential !== null && !credential.ok) return credential;
  const sent = await send(credential?.value ?? null);
  const response = responseOf(sent);
  if (auth === undefined || credential === null || response?.status !== 401) {
    return { ok: true, sent };
  }
  const again = await auth.renewAfter401(credential.value);
  if (again === null) return { ok: true, sent };
  await response.body?.cancel().catch(() => undefined);
  if (!again.ok) return again;
  return { ok: true, sent: await send(again.value) };
}
