import type { FakeVendor } from './vendor.ts';

/** One comment as a fake keeps it: times in epoch ms, as the vendor stamps them. */
export interface FakeComment {
  id: number;
  body: string;
  created: number;
  updated: number;
}

/**
 * The comments of each issue of a tracker fake (Jira, GitHub). A comment added, edited or
 * deleted bumps its issue's stamp (`bump`), as both vendors do, so the issue is listed again
 * by the next search that covers the change. An issue can vanish between the search that
 * lists it and the request for its comments: then those answer 404.
 */
export class CommentThreads {
  private readonly threads = new Map<string, FakeComment[]>();
  private readonly gone = new Set<string>();
  private readonly vanishing = new Set<string>();
  private next: number;
  /**
   * Called before a page of an issue's comments is answered, with the offset of its first
   * comment: a test changes comments there, while the poller pages through them.
   */
  onPage: ((issue: string, offset: number) => void) | undefined;
  /** The issues whose comments were asked for after they were gone (each answered 404). */
  readonly missed: string[] = [];
  /** How many times each comment was served, by id. */
  readonly served = new Map<number, number>();

  constructor(
    private readonly bump: (issue: string, at: number) => void,
    firstId: number,
  ) {
    this.next = firstId;
  }

  /** A new issue, created at `at`, with no comment yet. */
  open(issue: string, at: number): void {
    this.threads.set(issue, []);
    this.bump(issue, at);
  }

  /** A comment added at `at`; answers its id. */
  add(issue: string, body: string, at: number): number {
    const id = this.next;
    this.next += 1;
    this.thread(issue).push({ id, body, created: at, updated: at });
    this.bump(issue, at);
    return id;
  }

  /** A comment's body changed at `at`. */
  edit(issue: string, id: number, body: string, at: number): void {
    const comment = this.thread(issue).find((c) => c.id === id);
    if (comment === undefined) throw new Error(`no comment ${id} on ${issue}`);
    comment.body = body;
    comment.updated = at;
    this.bump(issue, at);
  }

  /** A comment deleted at `at`: gone from every listing after. */
  remove(issue: string, id: number, at: number): void {
    const thread = this.thread(issue);
    const index = thread.findIndex((c) => c.id === id);
    if (index < 0) throw new Error(`no comment ${id} on ${issue}`);
    thread.splice(index, 1);
    this.bump(issue, at);
  }

  /** The issue is deleted right after the next search lists it (its comments then 404). */
  vanishOnceListed(issue: string): void {
    this.vanishing.add(issue);
  }

  /** A search listed these issues: the ones set to vanish are deleted now. */
  listed(issues: readonly string[]): void {
    for (const issue of issues) {
      if (this.vanishing.delete(issue)) this.gone.add(issue);
    }
  }

  /** Whether the issue was deleted (no search lists it, its comments answer 404). */
  isGone(issue: string): boolean {
    return this.gone.has(issue);
  }

  /** An issue's comments, oldest first, as a page at `offset` sees them; undefined: 404. */
  page(issue: string, offset: number): FakeComment[] | undefined {
    const thread = this.threads.get(issue);
    if (thread === undefined || this.gone.has(issue)) {
      this.missed.push(issue);
      return undefined;
    }
    this.onPage?.(issue, offset);
    return [...this.thread(issue)];
  }

  /** These comments went out on a page. */
  sent(comments: readonly FakeComment[]): void {
    for (const { id } of comments) this.served.set(id, (this.served.get(id) ?? 0) + 1);
  }

  /** Every comment the tracker holds now, with its issue, leaving out deleted issues. */
  all(): { issue: string; comment: FakeComment }[] {
    return [...this.threads.entries()]
      .filter(([issue]) => !this.gone.has(issue))
      .flatMap(([issue, thread]) => thread.map((comment) => ({ issue, comment: { ...comment } })));
  }

  private thread(issue: string): FakeComment[] {
    const thread = this.threads.get(issue);
    if (thread === undefined) throw new Error(`no issue ${issue}`);
    return thread;
  }
}

/** A fake with issues and their comments (test/workers/examples.test.ts, scenario `children`). */
export interface CommentVendor extends FakeVendor {
  readonly threads: CommentThreads;
  /** The id the vendor gives the issue the fake knows as `issue` (a parent's delivered id). */
  issueId(issue: string): string;
  /** A comment as the vendor serves it now: what the receiver must end up holding. */
  commentRecord(issue: string, comment: FakeComment): unknown;
}

/** Whether a vendor fake serves comments per issue. */
export function servesComments(fake: FakeVendor): fake is CommentVendor {
  return 'threads' in fake && fake.threads instanceof CommentThreads;
}
