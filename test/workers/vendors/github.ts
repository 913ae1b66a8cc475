import { CommentThreads, type CommentVendor, type FakeComment } from './comments.ts';
import { FakeVendor, isoSeconds, type SeenRequest } from './vendor.ts';

const REPO = '/repos/acme/app';

/**
 * GitHub's repository issues (docs.github.com/en/rest/issues/issues#list-repository-issues):
 * `GET /repos/{owner}/{repo}/issues?since=<ISO 8601>&state=all&sort=updated&direction=…`,
 * numbered pages in the `Link` header; `since` is inclusive, stamps in whole seconds. And each
 * issue's comments (docs.github.com/en/rest/issues/comments#list-issue-comments):
 * `GET /repos/{owner}/{repo}/issues/{issue_number}/comments?since=…&per_page=…&page=…`,
 * oldest first, numbered pages in the `Link` header, 404 for an issue that is gone. A comment
 * added, edited or deleted bumps its issue's `updated_at`. The fake's record `101` is the
 * issue numbered 1 (a number is not an id: a config that mixes them up asks for the wrong one).
 */
export class FakeGitHub extends FakeVendor implements CommentVendor {
  readonly host = 'api.github.com';
  readonly threads = new CommentThreads((issue, at) => this.put(issue, at), 1_000_001);

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'no token');
    const version = headers.get('x-github-api-version');
    this.require(version === null || version === '2022-11-28', 'an API version GitHub has');
    if (url.pathname === `${REPO}/issues`) return this.issues(url);
    const comments = new RegExp(`^${REPO}/issues/(\\d+)/comments$`).exec(url.pathname);
    this.require(comments, 'unknown path');
    return this.comments(String(Number(comments[1]) + 100), url);
  }

  issueId(issue: string): string {
    return String(Number(issue));
  }

  commentRecord(issue: string, comment: FakeComment): unknown {
    const number = Number(issue) - 100;
    return {
      id: comment.id,
      node_id: `IC_kwDOA${comment.id}`,
      url: `https://${this.host}${REPO}/issues/comments/${comment.id}`,
      html_url: `https://github.com/acme/app/issues/${number}#issuecomment-${comment.id}`,
      issue_url: `https://${this.host}${REPO}/issues/${number}`,
      body: comment.body,
      user: { login: 'octocat', id: 1 },
      created_at: isoSeconds(comment.created),
      updated_at: isoSeconds(comment.updated),
      author_association: 'MEMBER',
    };
  }

  private issues(url: URL): Response {
    const since = url.searchParams.get('since') ?? '';
    this.require(ISO_SECONDS.test(since), 'since is ISO 8601 as YYYY-MM-DDTHH:MM:SSZ');
    this.require(url.searchParams.get('state') === 'all', 'closed issues change too: state=all');
    this.require(url.searchParams.get('sort') === 'updated', 'sort=updated');
    const direction = url.searchParams.get('direction') ?? 'desc';
    this.require(direction === 'asc' || direction === 'desc', 'direction is asc or desc');
    const listed = this.changed(Math.floor(Date.parse(since) / 1000) * 1000).filter(
      (v) => !this.threads.isGone(v.id),
    );
    if (direction === 'desc') listed.reverse();
    const { rows, links } = this.numbered(url, listed);
    this.threads.listed(rows.map((v) => v.id));
    return Response.json(
      rows.map((v) => ({
        id: Number(this.issueId(v.id)),
        number: Number(v.id) - 100,
        title: `issue ${v.id}`,
        state: 'open',
        updated_at: isoSeconds(v.at),
      })),
      { headers: { link: links } },
    );
  }

  /** One page of an issue's comments (`issue`: the fake's record id), oldest first. */
  private comments(issue: string, url: URL): Response {
    for (const name of url.searchParams.keys()) {
      this.require(['since', 'per_page', 'page'].includes(name), `unknown parameter ${name}`);
    }
    const since = url.searchParams.get('since');
    this.require(since === null || ISO_SECONDS.test(since), 'since is ISO 8601');
    const size = this.pageSize(url);
    const number = Number(url.searchParams.get('page') ?? 1);
    const thread = this.threads.page(issue, (number - 1) * size);
    if (thread === undefined) {
      return Response.json(
        {
          message: 'Not Found',
          documentation_url:
            'https://docs.github.com/rest/issues/comments#list-issue-comments-for-a-repository',
          status: '404',
        },
        { status: 404 },
      );
    }
    const listed = thread.filter((c) => since === null || c.updated >= Date.parse(since));
    const { rows, links } = this.numbered(url, listed);
    this.threads.sent(rows);
    return Response.json(
      rows.map((comment) => this.commentRecord(issue, comment)),
      { headers: { link: links } },
    );
  }

  /** `per_page`, 1 to 100 (default 30), and never more than the fake's page cap. */
  private pageSize(url: URL): number {
    const perPage = Number(url.searchParams.get('per_page') ?? 30);
    this.require(Number.isInteger(perPage) && perPage >= 1 && perPage <= 100, 'per_page 1 to 100');
    return Math.min(perPage, this.pageCap);
  }

  /** The page `page` (from 1) of `listed`, and its `Link` header (`next` while more follow). */
  private numbered<T>(url: URL, listed: T[]): { rows: T[]; links: string } {
    const number = Number(url.searchParams.get('page') ?? 1);
    this.require(Number.isInteger(number) && number >= 1, 'page is a number from 1');
    const size = this.pageSize(url);
    const link = (n: number) => {
      const target = new URL(url);
      target.searchParams.set('page', String(n));
      return `<${target}>`;
    };
    const last = Math.max(1, Math.ceil(listed.length / size));
    const rels = [`${link(last)}; rel="last"`];
    if (number < last) rels.unshift(`${link(number + 1)}; rel="next"`);
    return { rows: listed.slice((number - 1) * size, number * size), links: rels.join(', ') };
  }
}

const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
