// The upstream as the engine sees it: one page at a time (sources/http-source.ts is one).
import type { UpstreamFailureKind } from './classify.ts';
import type { Update } from './ports.ts';
import type { Window } from './window.ts';

/** A record the source could not read (no id, unparseable updated_at). */
export interface MalformedRecord {
  reason: string;
  raw: unknown;
}

export type PageResult =
  | {
      ok: true;
      updates: Update[];
      malformed: MalformedRecord[];
      /** Where the next page of the window is; null when this was the last. */
      next: string | null;
      /** source.resume: the token this page holds, which ends its round. */
      resume?: string;
      /** source.children: the listing answered 404 (its parent went away): no children. */
      missing?: true;
      /** The upstream's clock minus ours, from its Date header (R11). */
      skewMs?: number;
      /** The rate-limit quota is spent: no request before this time. */
      pauseUntil?: number;
    }
  | {
      ok: false;
      kind: UpstreamFailureKind;
      error: string;
      retryAfter?: number;
      skewMs?: number;
      /** source.resume: the upstream says the round's token expired (a resync follows). */
      expired?: true;
    };

/** The upstream, one page at a time. `cursor` is null for a window's first page. */
export interface Source {
  /** One page; `cancel` aborts the request (a page asked for ahead that the run will not take). */
  fetchPage(window: Window, cursor: string | null, cancel?: AbortSignal): Promise<PageResult>;
  /**
   * For the length of a run: one timer for the requests' deadlines, armed from one request
   * to the next instead of once per request (src/deadline.ts). Returns its release.
   */
  hold?(): () => void;
}
