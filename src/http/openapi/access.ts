import type { MiddlewareHandler } from 'hono';
import { requireToken } from '../auth.ts';
import { errorResponse } from './errors.ts';

type Guard = MiddlewareHandler<{ Bindings: Env }>;
type SecurityRequirement = Record<string, string[]>;

/**
 * Who may call a route, as GET /openapi.json says it (security schemes declared in
 * document.ts): STATUS_TOKEN or ADMIN_TOKEN for a read, ADMIN_TOKEN alone for a change.
 */
export const SECURITY: Readonly<
  Record<'public' | 'read' | 'admin' | 'readOrAnyone' | 'nudge', SecurityRequirement[]>
> = {
  public: [],
  read: [{ statusToken: [] }, { adminToken: [] }],
  admin: [{ adminToken: [] }],
  /** Anyone (the empty requirement), and a reader is shown more. */
  readOrAnyone: [{}, { statusToken: [] }, { adminToken: [] }],
  /** ADMIN_TOKEN, or the poller's own NUDGE_TOKEN as a header or as ?token=. */
  nudge: [{ adminToken: [] }, { nudgeToken: [] }, { nudgeTokenQuery: [] }],
};

/**
 * A route behind a token: its guard runs first (then `more`, e.g. the 404 of an unknown
 * poller), and the document says which tokens it takes.
 */
export function guarded(access: 'read' | 'admin', ...more: Guard[]) {
  return { middleware: [requireToken(access), ...more], security: SECURITY[access] };
}

const refusals = {
  401: errorResponse('No bearer token, or not one of the tokens this route takes.'),
  503: errorResponse('Closed: none of the secrets this route takes is set (fail closed).'),
};

/** The refusals of a read route's guard. */
export const readRefusals = refusals;

/** The refusals of an admin route's guard: a read-only token is a 403. */
export const adminRefusals = {
  ...refusals,
  403: errorResponse('STATUS_TOKEN is read-only: this route needs ADMIN_TOKEN.'),
};
