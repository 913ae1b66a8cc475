import { CommentThreads, type CommentVendor, type FakeComment } from './comments.ts';
import { FakeVendor, type SeenRequest } from './vendor.ts';

/** The time zone of the API user the fake's JQL dates are read in (Jira's rule). */
export const JIRA_USER_ZONE = 'Europe/Berlin';

const DATE = '"(\\d{4})/(\\d\\d)/(\\d\\d) (\\d\\d):(\\d\\d)"';
const JQL = new RegExp(
  `^project = ACME AND updated >= ${DATE} AND updated < ${DATE} ORDER BY updated ASC$`,
);

/** The UTC instant of a wall time in `zone` (its first occurrence when the clock goes back). */
export function wallTimeIn(zone: string, parts: number[]): number {
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0] = parts;
  const asUtc = Date.UTC(y, mo - 1, d, h, mi);
  const offsetAt = (instant: number) => {
    const shown = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    }).formatToParts(new Date(instant));
    const get = (type: string) => Number(shown.find((part) => part.type === type)?.value);
    return (
      Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute')) -
      Math.floor(instant / 60_000) * 60_000
    );
  };
  // Offsets one day apart cover a change of the zone's offset around this wall time.
  const candidates = [offsetAt(asUtc - 86_400_000), offsetAt(asUtc + 86_400_000)]
    .map((offset) => asUtc - offset)
    .filter((instant) => instant + offsetAt(instant) === asUtc);
  return candidates.length > 0 ? Math.min(...candidates) : asUtc - offsetAt(asUtc);
}

/** Jira's stamp: `2026-01-01T10:00:00.000+0100`, in the user's zone. */
function stamp(ms: number): string {
  const local = new Intl.DateTimeFormat('sv-SE', {
    timeZone: JIRA_USER_ZONE,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  })
    .format(new Date(ms))
    .replace(' ', 'T');
  const wall = Date.parse(`${local}Z`);
  const offset = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
  const mm = String(Math.abs(offset) % 60).padStart(2, '0');
  return `${local}.${String(ms % 1000).padStart(3, '0')}${sign}${hh}${mm}`;
}

/**
 * Jira Cloud's issue search (developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-search/#api-rest-api-3-search-jql-get):
 * `GET /rest/api/3/search/jql?jql=…&fields=…&maxResults=…&nextPageToken=…`; JQL dates are
 * `"yyyy/MM/dd HH:mm"` in the API user's time zone, to the minute; answers `issues`,
 * `nextPageToken` and `isLast`. And each issue's comments
 * (developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-comments/#api-rest-api-3-issue-issueidorkey-comment-get):
 * `GET /rest/api/3/issue/{issueIdOrKey}/comment?startAt=…&maxResults=…&orderBy=…&expand=…`,
 * answering `{startAt, maxResults, total, comments}`, 404 for an issue that is gone. A
 * comment added, edited or deleted bumps its issue's `updated`.
 */
export class FakeJira extends FakeVendor implements CommentVendor {
  readonly host = 'acme.atlassian.net';
  override readonly idPrefix = '10';
  readonly threads = new CommentThreads((issue, at) => this.put(issue, at), 10_000);

  protected answer(request: SeenRequest): Response {
    const { method, url, headers } = request;
    this.require(method === 'GET', 'a GET');
    this.require(headers.get('authorization')?.startsWith('Basic '), 'email and API token');
    if (url.pathname === '/rest/api/3/search/jql') return this.search(url);
    const comments = /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/.exec(url.pathname);
    this.require(comments, 'unknown path');
    return this.comments(decodeURIComponent(comments[1] ?? ''), url.searchParams);
  }

  issueId(issue: string): string {
    return `${this.idPrefix}${issue}`;
  }

  commentRecord(issue: string, comment: FakeComment): unknown {
    const author = { accountId: '5b10a2844c20165700ede21g', displayName: 'Mia Krystof' };
    return {
      self: `https://${this.host}/rest/api/3/issue/${this.issueId(issue)}/comment/${comment.id}`,
      id: String(comment.id),
      author,
      // Jira's v3 API writes rich text in the Atlassian Document Format.
      body: {
        type: 'doc',
        version: 1,
        content: [{ type: 'paragraph', content: [{ type: 'text', text: comment.body }] }],
      },
      updateAuthor: author,
      created: stamp(comment.created),
      updated: stamp(comment.updated),
      jsdPublic: true,
    };
  }

  private search(url: URL): Response {
    const jql = JQL.exec(url.searchParams.get('jql') ?? '');
    this.require(jql, `Error in the JQL Query: ${url.searchParams.get('jql')}`);
    const numbers = jql.slice(1).map(Number);
    const from = wallTimeIn(JIRA_USER_ZONE, numbers.slice(0, 5));
    const to = wallTimeIn(JIRA_USER_ZONE, numbers.slice(5, 10));
    const max = Number(url.searchParams.get('maxResults') ?? 50);
    this.require(max >= 1 && max <= 5000, 'maxResults 1 to 5000');
    const page = this.slice(
      this.changed(from, to).filter((v) => !this.threads.isGone(v.id)),
      this.offsetOf(url.searchParams.get('nextPageToken')),
      max,
    );
    this.threads.listed(page.rows.map((v) => v.id));
    return Response.json({
      issues: page.rows.map((v) => ({
        id: this.issueId(v.id),
        key: `ACME-${v.id}`,
        fields: { summary: `issue ${v.id}`, updated: stamp(v.at) },
      })),
      ...(page.next === null ? {} : { nextPageToken: `c${page.next}` }),
      isLast: page.next === null,
    });
  }

  /** One page of an issue's comments, by its id (`10101`) or key (`ACME-101`). */
  private comments(idOrKey: string, params: URLSearchParams): Response {
    for (const name of params.keys()) {
      this.require(
        ['startAt', 'maxResults', 'orderBy', 'expand'].includes(name),
        `unknown parameter ${name}`,
      );
    }
    const startAt = Number(params.get('startAt') ?? 0);
    this.require(Number.isInteger(startAt) && startAt >= 0, 'startAt is an integer from 0');
    const max = Number(params.get('maxResults') ?? 5000);
    this.require(Number.isInteger(max) && max >= 1 && max <= 5000, 'maxResults 1 to 5000');
    const order = params.get('orderBy') ?? 'created';
    this.require(['created', '+created', '-created'].includes(order), 'orderBy is [+-]created');
    this.require(
      (params.get('expand') ?? 'renderedBody') === 'renderedBody',
      'expand is renderedBody',
    );
    const issue = /^ACME-(\d+)$/.exec(idOrKey)?.[1] ?? /^10(\d+)$/.exec(idOrKey)?.[1] ?? '';
    const thread = this.threads.page(issue, startAt);
    if (thread === undefined) {
      return Response.json(
        {
          errorMessages: ['Issue does not exist or you do not have permission to see it.'],
          errors: {},
        },
        { status: 404 },
      );
    }
    if (order === '-created') thread.reverse();
    const page = this.slice(thread, startAt, max);
    this.threads.sent(page.rows);
    return Response.json({
      startAt,
      maxResults: Math.min(max, this.pageCap),
      total: thread.length,
      comments: page.rows.map((comment) => this.commentRecord(issue, comment)),
    });
  }
}
