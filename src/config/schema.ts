import * as z from 'zod';
import { deliverSchema } from '../delivery/kinds/index.ts';
import { authProblems, authSchema } from '../sources/auth/index.ts';
import { fetchUrlOf } from '../sources/fetch-url.ts';
import { nextSchema, pagingProblems } from '../sources/paging/index.ts';
import { bodyPath } from '../sources/paging/style.ts';
import { childrenProblems, childrenSchema } from './children.ts';
import { formatDuration } from './duration.ts';
import { duration, size } from './fields.ts';
import { maxDeletes } from './max-deletes.ts';
import { body, fetchField, method, requestRules, sendsWindowEnd } from './request-fields.ts';
import { resumeProblems, resumeSchema } from './resume.ts';
import { cronProblem } from './schedule.ts';
import { stampFormat, timeFormat, timeProblems, timeZoneName } from './time-fields.ts';

/** A label's name: lists, the dashboard's filter and /metrics series take it as it is. */
export const LABEL_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** An ISO 8601 instant, parsed to epoch milliseconds. */
const instant = z.string().transform((text, ctx) => {
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" is not an ISO 8601 time (e.g. "2026-01-01T00:00:00Z")`,
    });
    return z.NEVER;
  }
  return ms;
});

const MINUTE = 60_000;
const MB = 1024 * 1024;

/**
 * A stream of deletes beside the main one (Zendesk's deleted_tickets, Salesforce's
 * getDeleted): polled after it in every run, with its own checkpoint. A key left out takes
 * the main source's value, but `params`, which are the endpoint's own.
 */
const deletionsSchema = z.strictObject({
  /** The endpoint that answers "what was deleted since `from`", on source.url's origin. Required. */
  url: z.url({ protocol: /^https?$/ }),
  /** Query parameter that takes the window start (default source.from_param). */
  from_param: z.string().min(1).optional(),
  /** Query parameter for the window end (default source.to_param). */
  to_param: z.string().min(1).optional(),
  /** Dot path to the array of deletes (default source.items). */
  items: z.string().optional(),
  /** Dot path of a deleted record's id (default source.id). */
  id: z.string().min(1).optional(),
  /** Dot path of when it was deleted: its version (default "deleted_at"). */
  deleted_at: z.string().min(1).default('deleted_at'),
  /** Fixed query parameters of this endpoint (default none). */
  params: z.record(z.string(), z.string()).default({}),
  /** GET (default) or POST: this endpoint's own, like its params. */
  method,
  /** Optional JSON body of this endpoint (with method = "POST"); {from} and {to} as in source.body. */
  body: body.optional(),
  /** Optional "asc": deletes come oldest first (default source.sorted). */
  sorted: z.enum(['asc']).optional(),
  /** Paging within a window (default source.next). */
  next: nextSchema.optional(),
});

/** The upstream API and how to read it. */
const sourceSchema = z.strictObject({
  /** The endpoint that answers "what changed since `from`". Required. */
  url: z.url({ protocol: /^https?$/ }),
  /** Optional: the name of a service binding to send requests through (another Worker). */
  service: z.string().min(1).optional(),
  /** Query parameter that takes the window start; required unless url, params or body holds {from}. */
  from_param: z.string().min(1).optional(),
  /** Optional query parameter for the window end; enables bounded windows (max_window), as {to} does. */
  to_param: z.string().min(1).optional(),
  /** GET (default) or POST. */
  method,
  /** Optional JSON body (with method = "POST"), sent as JSON; its strings take {from} and {to}. */
  body: body.optional(),
  /** iso | iso_seconds | unix | unix_ms | a pattern ("yyyy/MM/dd HH:mm"), for the window bounds (default iso). */
  time_format: timeFormat.default('iso'),
  /** IANA time zone of the patterns' wall-clock times, sent and read (default UTC). */
  time_zone: timeZoneName.default('UTC'),
  /** Dot path to the array of records; "" = the body is the array (default ""). */
  items: z.string().default(''),
  /** Dot path of a record's id (default "id"). */
  id: z.string().min(1).default('id'),
  /** Dot path of a record's updated_at (default "updated_at"; with resume, none: a record's version is a hash of its content). */
  updated_at: z.string().min(1).optional(),
  /** auto | iso | iso_seconds | unix | unix_ms | a pattern: how updated_at is written (default auto: ISO strings, numbers below 1e11 are seconds, above are milliseconds). */
  updated_at_format: stampFormat.default('auto'),
  /**
   * Optional: how the stream marks a deleted record (a tombstone), delivered as a delete:
   * `{ path = "deleted_at" }` (there and not null) or `{ path = "status", equals = "deleted" }`.
   */
  deleted: z
    .strictObject({
      /** Dot path in a record. */
      path: z.string().min(1),
      /** The value at `path` that means deleted (default: any value but null or false). */
      equals: z.union([z.string(), z.number(), z.boolean()]).optional(),
    })
    .optional(),
  /**
   * Optional dot path where the upstream reports errors in a 200 (GraphQL's "errors"): a page
   * with anything there fails, retried like a 5xx (default none).
   */
  errors: bodyPath(z.string().min(1)).optional(),
  /** Optional: a separate stream of deletes, polled after this one in every run. */
  deletions: deletionsSchema.optional(),
  /** Optional "asc": records come oldest first, so a window too big for one run can commit its progress. */
  sorted: z.enum(['asc']).optional(),
  /** Optional pause between two requests of a run, for upstreams that ask for one. */
  page_delay: duration.optional(),
  /** Fixed query parameters (default none). */
  params: z.record(z.string(), z.string()).default({}),
  /** Request headers; use ${SECRET} for credentials (default none). */
  headers: z.record(z.string(), z.string()).default({}),
  /** Optional: how to authenticate (bearer, basic, api_key, oauth2, jwt_bearer), instead of a free-form header. */
  auth: authSchema.optional(),
  /** Per request timeout, body included (default 30s). */
  timeout: duration.default(30_000),
  /** The largest response body read; a larger one fails the window with a clear error (default 16MB). */
  max_body: size.default(16 * MB),
  /** Paging within a window (default { type = "none" }). */
  next: nextSchema.default({ type: 'none' }),
  /** Optional: the checkpoint is a token the upstream hands out at the end of a round (delta queries, sync tokens). */
  resume: resumeSchema.optional(),
  /** Optional: requests per parent record: each new record's children, delivered as records of their own. */
  children: childrenSchema.optional(),
});

/**
 * A full listing of every id, now and then: what it lacks was deleted, what it shows newer
 * than delivered changed without the stream showing it (engine/reconcile.ts).
 */
const reconcileSchema = z.strictObject({
  /** How often a listing starts (at least 1m). Required. */
  every: duration.pipe(z.number().min(MINUTE, 'must be at least 1m')),
  /** The endpoint that lists every record, on source.url's origin. Required. */
  url: z.url({ protocol: /^https?$/ }),
  /** Dot path to the array of records (default source.items). */
  items: z.string().optional(),
  /** Dot path of a record's id (default source.id). */
  id: z.string().min(1).optional(),
  /** Optional dot path of a record's updated_at: without it, only ids never delivered are upserted. */
  updated_at: z.string().min(1).optional(),
  /**
   * "updated_at" (default): a listed record is an upsert when its updated_at is newer than
   * delivered. "content": also when its content (as deliver.changes_only hashes it) differs
   * from what was delivered, for changes made without a new updated_at; the listing must
   * show whole records, as the stream does.
   */
  compare: z.enum(['updated_at', 'content']).default('updated_at'),
  /** Fixed query parameters of the listing (default none). */
  params: z.record(z.string(), z.string()).default({}),
  /** GET (default) or POST: the listing's own. */
  method,
  /** Optional JSON body of the listing (with method = "POST"); no window placeholders. */
  body: body.optional(),
  /** Paging of the listing (default source.next). */
  next: nextSchema.optional(),
  /** Most deletes one listing may deliver without a confirm, of the known ids (default "10%"). */
  max_deletes: maxDeletes.default({ percent: 10 }),
  /**
   * Optional URL with `{id}` in its path: an upsert the listing found is fetched whole from
   * it, and a delete it found is confirmed by a 404 or 410 there.
   */
  fetch: fetchField.optional(),
});

/** One poller: `[vars.POLLERS.<name>]`. */
export const pollerSchema = z
  .strictObject({
    /** When the poller ticks by itself, as a cron pattern (UTC); this or `every` is required. */
    cron: z.string().min(1).optional(),
    /** When the poller ticks by itself, as an interval ("15s", "5m"; at least 1s); this or `cron`. */
    every: duration.pipe(z.number().min(1_000, 'must be at least 1s')).optional(),
    /** Free-form labels (e.g. { tenant = "acme" }) for filtering lists, the dashboard and metrics (default none). */
    labels: z
      .record(
        z.string().regex(LABEL_KEY, 'label names are letters, digits and _'),
        z.string().max(256),
      )
      .refine((labels) => Object.keys(labels).length <= 16, 'at most 16 labels')
      .default({}),
    /** Default true. */
    enabled: z.boolean().default(true),
    /** Checkpoint when none is stored (default: the first run's T). */
    start_from: instant.optional(),
    /** Crash-recovery ceiling; must be > max_run (default 15m). */
    lease_ttl: duration.default(15 * MINUTE),
    /** A run stops itself after this (default 10m). */
    max_run: duration.default(10 * MINUTE),
    /** C <- T - lag_allowance (default 0s: store the start time). */
    lag_allowance: duration.default(0),
    /** Each window starts this much before C (default 0s). */
    overlap: duration.default(0),
    /** Optional; needs source.to_param; chunks backlogs into windows of this size. */
    max_window: duration.optional(),
    /** Per update, then dead letter (default 5). */
    max_attempts: z.int().min(1).default(5),
    /** Dead letters are pruned this long after their first failure, with an audit entry (default 14d, at least 1m). */
    dead_letter_retention: duration
      .pipe(z.number().min(MINUTE, 'must be at least 1m'))
      .default(14 * 24 * 60 * MINUTE),
    /** /healthz reports the poller when lag exceeds this (default 30m). */
    alert_after: duration.default(30 * MINUTE),
    /** The longest a Retry-After or rate-limit reset may hold the poller off; longer hints are cut to this (default 1h). */
    max_rate_limit_wait: duration.default(60 * MINUTE),
    /** Nudges (POST /pollers/:name/nudge) never start runs more often than this (default 5s). */
    min_interval: duration.default(5_000),
    /** Runs that find nothing are logged at most this often (with how many each line stands for); "0s" logs every run (default 10m). */
    log_idle_every: duration.default(10 * MINUTE),
    /** Requests (upstream and delivery) one run may make before it continues in a fresh invocation (default 1000). */
    max_subrequests: z.int().min(2).default(1000),
    // updated_at defaults to "updated_at", but with resume: a version is then the content's hash.
    source: sourceSchema.transform((source) =>
      source.updated_at === undefined && source.resume === undefined
        ? { ...source, updated_at: 'updated_at' }
        : source,
    ),
    deliver: deliverSchema,
    /** Optional: a periodic full listing that finds deletes and changes the stream never showed. */
    reconcile: reconcileSchema.optional(),
  })
  .superRefine((poller, ctx) => {
    if ((poller.cron === undefined) === (poller.every === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [poller.cron === undefined ? 'cron' : 'every'],
        message:
          poller.cron === undefined
            ? 'is required (or `every`): when the poller ticks by itself'
            : 'cannot be set together with cron: choose one',
      });
    }
    const cronError = poller.cron === undefined ? null : cronProblem(poller.cron);
    if (cronError !== null) {
      ctx.addIssue({
        code: 'custom',
        path: ['cron'],
        message: `"${poller.cron}" is not a cron pattern: ${cronError}`,
      });
    }
    // A run checks max_run before each request, so it can outlast it by one request and one
    // page_delay: the lease must outlive that too, or a live run would be taken over.
    const longestRun =
      poller.max_run +
      Math.max(poller.source.timeout, poller.deliver.timeout) +
      (poller.source.page_delay ?? 0);
    if (poller.lease_ttl <= longestRun) {
      ctx.addIssue({
        code: 'custom',
        path: ['lease_ttl'],
        message:
          `must be greater than max_run plus the longest request timeout and page_delay (${formatDuration(longestRun)}): ` +
          'the lease is the crash-recovery ceiling, so a run still going when it expires would be ' +
          'taken over by a second, concurrent run',
      });
    }
    // What the paging style cannot work with (numbered pages over records sorted oldest
    // first, or over a window whose end the request sends).
    const bounded = sendsWindowEnd(poller.source);
    for (const problem of pagingProblems({ ...poller.source, bounded })) {
      ctx.addIssue({ code: 'custom', path: ['source', ...problem.path], message: problem.message });
    }
    const deletions = poller.source.deletions;
    if (deletions !== undefined) {
      const stream = {
        next: deletions.next ?? poller.source.next,
        sorted: deletions.sorted ?? poller.source.sorted,
        items: deletions.items ?? poller.source.items,
        // Its own url, params and body; the source's to_param if it sets none.
        bounded: sendsWindowEnd({
          ...deletions,
          to_param: deletions.to_param ?? poller.source.to_param,
        }),
      };
      for (const problem of pagingProblems(stream)) {
        ctx.addIssue({
          code: 'custom',
          path: ['source', 'deletions', ...problem.path],
          message: problem.message,
        });
      }
    }
    if (poller.max_run > 14 * MINUTE) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_run'],
        message: 'must be at most 14m: Cloudflare cuts alarm handlers at 15 minutes of wall time',
      });
    }
    if (poller.max_window !== undefined && !sendsWindowEnd(poller.source)) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_window'],
        message:
          'needs source.to_param (or {to} in source.url, params or body): a window can only be bounded if the upstream takes an end',
      });
    }
    // What requests per parent cannot work with (config/children.ts), and their paging.
    for (const problem of childrenProblems(poller)) ctx.addIssue({ code: 'custom', ...problem });
    const children = poller.source.children;
    if (children !== undefined) {
      for (const problem of pagingProblems({ ...children, bounded: false })) {
        ctx.addIssue({
          code: 'custom',
          path: ['source', 'children', ...problem.path],
          message: problem.message,
        });
      }
    }
    // What a round without a time window cannot use (config/resume.ts).
    for (const problem of resumeProblems(poller)) ctx.addIssue({ code: 'custom', ...problem });
    // Where each request's window goes (request-fields.ts): a body only with POST, etc.
    for (const problem of requestRules(poller)) ctx.addIssue({ code: 'custom', ...problem });
    // What the source.auth kind cannot work with (sources/auth/: a header source.headers sets too).
    for (const problem of authProblems(poller.source)) {
      ctx.addIssue({ code: 'custom', path: ['source', ...problem.path], message: problem.message });
    }
    // The source's headers (its credentials) go with these requests: never to another origin.
    const origin = URL.canParse(poller.source.url) ? new URL(poller.source.url).origin : null;
    const elsewhere: [string[], string | undefined][] = [
      [['source', 'deletions', 'url'], poller.source.deletions?.url],
      [['reconcile', 'url'], poller.reconcile?.url],
      [['reconcile', 'fetch'], fetchUrlOf(poller.reconcile?.fetch)?.replaceAll('{id}', 'x')],
    ];
    for (const [path, url] of elsewhere) {
      if (
        origin !== null &&
        url !== undefined &&
        URL.canParse(url) &&
        new URL(url).origin !== origin
      ) {
        ctx.addIssue({
          code: 'custom',
          path,
          message: `must be on source.url's origin (${origin}): the source's headers, its credentials, are sent with it`,
        });
      }
    }
    // What the time formats' precision makes unsafe (config/time-fields.ts).
    for (const problem of timeProblems(poller)) {
      ctx.addIssue({ code: 'custom', path: problem.path, message: problem.message });
    }
  });

export type PollerConfig = z.output<typeof pollerSchema>;
export type SourceConfig = PollerConfig['source'];
export type DeliverConfig = PollerConfig['deliver'];
export type NextConfig = SourceConfig['next'];
export type DeletionsConfig = NonNullable<SourceConfig['deletions']>;
export type ReconcileConfig = NonNullable<PollerConfig['reconcile']>;
export type { WebhookConfig } from '../delivery/kinds/webhook.ts';
export type { AuthConfig } from '../sources/auth/index.ts';
