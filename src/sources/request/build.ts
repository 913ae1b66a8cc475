import type { SourceConfig } from '../../config/schema.ts';
import type { Window } from '../../engine/window.ts';
import { pageStep } from '../paging/index.ts';
import { writeBodyPath } from './body-path.ts';
import { baseHeaders, type RequestDraft } from './draft.ts';
import {
  type Bounds,
  renderBody,
  renderParentHeader,
  renderParentUrl,
  renderText,
  windowBounds,
} from './placeholders.ts';

/**
 * Builds the requests of a source's window, page by page: the window's request (`url`,
 * `params`, the window's bounds in `from_param` / `to_param` and in the `{from}` / `{to}`
 * placeholders, `method`, `headers`, `body`), and each page's step on it (the paging style's
 * value in the query or the body, or the upstream's next URL).
 */

/** What of a source's config its requests are built from. */
export type RequestConfig = Pick<
  SourceConfig,
  | 'url'
  | 'params'
  | 'headers'
  | 'from_param'
  | 'to_param'
  | 'time_format'
  | 'time_zone'
  | 'method'
  | 'body'
  | 'resume'
>;

/** The request every page of `window` starts from: built once a window, not once a page. */
export function windowDraft(config: RequestConfig, window: Window): RequestDraft {
  const bounds = windowBounds(window, config.time_format, config.time_zone);
  // A child listing's headers take its parent's values too (a parent's own token, say).
  const headers = baseHeaders(
    window.parent === undefined ? config.headers : renderValues(config.headers, bounds),
  );
  const token = window.round?.token ?? null;
  const resume = config.resume;
  // A round from a token that is a URL: requested as it is (its origin checked by the source).
  if (resume !== undefined && token !== null && resume.param === undefined) {
    return {
      method: config.method,
      url: new URL(token),
      headers,
      body: config.body === undefined ? undefined : renderBody(config.body, bounds),
    };
  }
  // Rendered before it is parsed: a URL would percent-encode the braces of `{from}`.
  const url = new URL(
    window.parent === undefined
      ? renderText(config.url, bounds, encodeURIComponent)
      : renderParentUrl(config.url, bounds),
  );
  // A round from a token sent as a parameter takes resume.params instead of source.params;
  // every page of the round repeats them (the page's cursor goes beside them, pageDraft).
  const param = token === null ? undefined : resume?.param;
  const params = param === undefined ? config.params : (resume?.params ?? {});
  if (param !== undefined && token !== null) url.searchParams.set(param, token);
  for (const [key, value] of Object.entries(params)) {
    url.searchParams.set(key, renderText(value, bounds));
  }
  // A listing (reconcile) asks for everything: it has no window start to send.
  if (config.from_param !== undefined && config.from_param !== '') {
    url.searchParams.set(config.from_param, bounds.from);
  }
  if (config.to_param !== undefined && window.bounded) {
    url.searchParams.set(config.to_param, bounds.to);
  }
  return {
    method: config.method,
    url,
    headers,
    body: config.body === undefined ? undefined : renderBody(config.body, bounds),
  };
}

/** A child request's headers, each value rendered with its parent's values. */
function renderValues(table: Record<string, string>, bounds: Bounds): Record<string, string> {
  return Object.fromEntries(
    Object.entries(table).map(([key, value]) => [key, renderParentHeader(value, bounds)]),
  );
}

/**
 * The request of the page `cursor` names (null: the window's first), from `first`, the
 * window's request (windowDraft). Throws on a next URL that does not parse (the source
 * reports it as a bad response).
 */
export function pageDraft(
  config: RequestConfig & Pick<SourceConfig, 'next'>,
  window: Window,
  cursor: string | null,
  first: RequestDraft = windowDraft(config, window),
): RequestDraft {
  const step = pageStep(config.next, cursor);
  if (step.kind === 'window') return { ...first, url: new URL(first.url) };
  // The upstream's own URL for the next page: its query is the upstream's; the method and
  // the body stay the window's.
  if (step.kind === 'follow') return { ...first, url: new URL(step.url) };
  if (step.in === 'body') {
    return {
      ...first,
      url: new URL(first.url),
      body: writeBodyPath(first.body, step.param, step.value),
    };
  }
  const url = new URL(first.url);
  url.searchParams.set(step.param, String(step.value));
  return { ...first, url };
}
