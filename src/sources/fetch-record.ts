import { redact } from '../config/interpolate.ts';
import type { SourceConfig } from '../config/schema.ts';
import { startDeadline, TIMED_OUT } from '../deadline.ts';
import type { FetchById } from '../engine/reconcile-ports.ts';
import type { Authorize, Authorizer } from './auth/authorizer.ts';
import { sendAuthorized } from './auth/send.ts';
import { type FetchTable, fetchBody, fetchUrl } from './fetch-url.ts';
import type { HttpFetch } from './http-source.ts';
import { fetchFailure } from './network-error.ts';
import { readBody } from './read-body.ts';
import { baseHeaders, type RequestDraft, requestOf, shownDraft } from './request/draft.ts';

/**
 * `reconcile.fetch`: one record by id, the URL with `{id}` in its path (percent-encoded:
 * sources/fetch-url.ts) or a POST with `{id}` in its body, with the source's headers and source.auth (the schema keeps the URL on source.url's
 * origin; a redirect is not followed). A 404 or 410 says it is gone since the listing: null,
 * nothing to upsert, and a delete confirmed. An id that would change the path is not asked
 * for (`unaddressable`): a 404 of another path must not confirm its delete.
 */
export function fetchRecordById(
  fetch: string | FetchTable,
  source: SourceConfig,
  fetcher: HttpFetch,
  secrets: readonly string[],
  auth?: Authorizer,
): FetchById {
  const table = typeof fetch === 'string' ? { url: fetch, method: 'GET' as const } : fetch;
  const headers = baseHeaders(source.headers);
  return async (id) => {
    const url = fetchUrl(table.url, id);
    if (url === null) {
      return {
        ok: false,
        unaddressable: true,
        error: `the id ${JSON.stringify(id)} cannot be put in reconcile.fetch's path`,
      };
    }
    const draft: RequestDraft = {
      method: table.method,
      url: new URL(url),
      headers,
      body: table.body === undefined ? undefined : fetchBody(table.body, id),
    };
    const shown = redact(shownDraft(draft, url), secrets);
    const deadline = startDeadline(source.timeout);
    const send = async (authorize: Authorize) => {
      const request = await authorize(requestOf(draft, { signal: deadline.signal }));
      return Promise.race([fetcher(request), deadline.expired]);
    };
    try {
      // The stream's own way: a 401 to a renewed token renews it once and asks again.
      const sent = await sendAuthorized(auth, send, (answer) =>
        answer === TIMED_OUT ? null : answer,
      );
      if (!sent.ok) return { ok: false, error: sent.error };
      const response = sent.sent;
      if (response === TIMED_OUT) return { ok: false, error: `${shown}: timed out` };
      if (response.status === 404 || response.status === 410) {
        await response.body?.cancel().catch(() => undefined);
        return { ok: true, record: null };
      }
      const body = await readBody(response, source.max_body, deadline);
      if (!response.ok) return { ok: false, error: `${shown}: HTTP ${response.status}` };
      if (!body.ok)
        return { ok: false, error: `${shown}: the body could not be read (${body.reason})` };
      try {
        return { ok: true, record: JSON.parse(body.text) };
      } catch {
        return { ok: false, error: `${shown}: HTTP ${response.status} but the body is not JSON` };
      }
    } catch (error) {
      const reason = fetchFailure(error, url);
      return { ok: false, error: `${shown}: ${redact(reason, secrets)}` };
    } finally {
      deadline.clear();
    }
  };
}
