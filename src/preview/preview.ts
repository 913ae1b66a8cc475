import { sendsWindowEnd } from '../config/request-fields.ts';
import { RunBudget } from '../engine/budget.ts';
import { isoTime } from '../engine/iso-time.ts';
import { type PageTally, pages as pageStream } from '../engine/page-stream.ts';
import type { PageResult, RunContext } from '../engine/ports.ts';
import { nextCheckpoint, planWindow, type Window } from '../engine/window.ts';
import { previewChildren } from './children.ts';
import { type PreviewRecord, recordView } from './records.ts';
import type { PreviewRequest, RequestLog } from './request-log.ts';
import { type PreviewWarning, previewWarnings, type SeenPage } from './warnings.ts';

/** How much a preview reads at most. */
export interface PreviewLimits {
  pages: number;
  records: number;
}

/** What a preview reads by default, and at most. */
export const PREVIEW_PAGES = { default: 3, max: 20 } as const;
export const PREVIEW_RECORDS = { default: 20, max: 500 } as const;

/** Where a preview's window starts when nothing else says: this long before now. */
export const PREVIEW_DEFAULT_SPAN_MS = 24 * 3_600_000;

/** The checkpoint a preview starts from, and where it comes from (said in its answer). */
export interface PreviewStart {
  at: number;
  /** `checkpoint`: the poller's own; `start_from`; `asked`: the request's `from`; `default`: a day ago. */
  source: 'checkpoint' | 'start_from' | 'asked' | 'default';
}

/** A preview's window, in ISO 8601. */
export interface PreviewWindow {
  from: string;
  to: string;
  /** The end is sent to the upstream (source.to_param); otherwise it is now, open-ended. */
  bounded: boolean;
  /** max_window cut it before now: a run goes on with the next window. */
  cut: boolean;
}

/** The checkpoint before the preview, and the one a run over the same window would commit. */
export interface PreviewCheckpoint {
  from: string;
  from_source: PreviewStart['source'];
  /** Null: the run would fail and keep its checkpoint. */
  would_commit: string | null;
  note: string;
}

/** What a preview answers: nothing of it was delivered or written. */
export interface PreviewResult {
  requests: PreviewRequest[];
  records: PreviewRecord[];
  window: PreviewWindow;
  checkpoint: PreviewCheckpoint;
  warnings: PreviewWarning[];
  /** Pages read, and whether the last one ended the window. */
  pages: number;
  complete: boolean;
}

/** What a preview runs with: a wired poller (its source recorded by `log`) and where to start. */
export interface PreviewInput {
  context: RunContext;
  log: RequestLog;
  start: PreviewStart;
  limits: PreviewLimits;
  /** Whether the preview may send its next request (it still holds the poller's lease). */
  mayGo?: () => boolean;
}

/**
 * Reads one window as a run of the wired poller would (its source: auth, paging, window,
 * time formats, tombstones) and answers with every request, the records, the window, the
 * checkpoint a run would commit and what looks wrong. It calls no deliverer and no store:
 * whatever it reads goes nowhere but into the answer.
 */
export async function previewWindow(input: PreviewInput): Promise<PreviewResult> {
  const { context, log, start, limits } = input;
  const { config } = context;
  const startedAt = context.now();
  const window = planWindow({
    checkpoint: start.at,
    overlap: config.overlap,
    maxWindow: config.max_window,
    bounded: sendsWindowEnd(config.source),
    now: startedAt,
    ...(context.precision ? { precision: context.precision } : {}),
  });
  const pages: SeenPage[] = [];
  const records: PreviewRecord[] = [];
  // Why the window failed where no page did (a paging loop): a run fails there too.
  let failure: string | null = null;
  // The page stream a run reads, with the preview's own budget and counters: page_delay
  // between pages, never past max_run or the lease, and the paging loop caught. It keeps
  // what each page answered, a failed one too, for the answer.
  let answered: PageResult | undefined;
  const childWarnings: PreviewWarning[] = [];
  const source = {
    fetchPage: async (at: Window, cursor: string | null, cancel?: AbortSignal) => {
      answered = await context.source.fetchPage(at, cursor, cancel);
      return answered;
    },
  };
  const tally: PageTally = { pages: 0, skewMs: null, rateLimitedUntil: null };
  const paging = {
    source,
    budget: new RunBudget(startedAt, config.max_run, config.max_subrequests),
    tally,
    now: context.now,
    holds: input.mayGo ?? (() => true),
    pageDelay: config.source.page_delay,
    sleep: context.sleep,
  };
  const release = context.source.hold?.();
  try {
    // Never asks ahead: a preview delivers nothing, so there is nothing to read beside.
    for await (const step of pageStream(window, paging)) {
      if (step.kind === 'page') {
        pages.push({ result: step.page, body: parsed(log.lastText()), at: context.now() });
        for (const read of [...step.page.updates, ...step.page.malformed]) {
          if (records.length < limits.records) records.push(recordView(read, context.isDeleted));
        }
        // source.children: each parent's first page of children, while there is room.
        const kids = await previewChildren(
          context,
          window,
          step.page.updates,
          () => limits.records - records.length,
          input.mayGo,
        );
        records.push(...kids.records);
        childWarnings.push(...kids.warnings);
        const read = records.length >= limits.records || pages.length >= limits.pages;
        if (read && step.page.next !== null) break;
      } else if (step.kind === 'failed') {
        if (answered?.ok === false) {
          pages.push({ result: answered, body: undefined, at: context.now() });
        } else {
          failure = step.error;
        }
      }
    }
  } finally {
    release?.();
  }
  const last = pages.at(-1)?.result;
  const complete = failure === null && last?.ok === true && last.next === null;
  const redact = context.redact ?? ((text: string) => text);
  const warnings = [...previewWarnings(config, window, pages), ...childWarnings];
  if (failure !== null) {
    warnings.push({
      kind: 'paging_loop',
      message: `the window cannot be read to its end, so a run would fail here and keep its checkpoint: ${failure}`,
    });
  }
  return {
    requests: log.shown(redact),
    records,
    window: windowView(window),
    checkpoint: checkpointView(start, window, pages, complete, config.lag_allowance, failure),
    warnings: warnings.map((warning) => ({ ...warning, message: redact(warning.message) })),
    pages: pages.length,
    complete,
  };
}

function windowView(window: Window): PreviewWindow {
  return {
    from: isoTime(window.from),
    to: isoTime(window.to),
    bounded: window.bounded,
    cut: window.cut,
  };
}

/** R1 over the preview's window: what a run that read all of it would commit, or why none. */
function checkpointView(
  start: PreviewStart,
  window: Window,
  pages: readonly SeenPage[],
  complete: boolean,
  lagAllowance: number,
  failure: string | null,
): PreviewCheckpoint {
  const from = { from: isoTime(start.at), from_source: start.source };
  if (failure !== null) {
    return {
      ...from,
      would_commit: null,
      note: `${failure}: a run would fail there and keep its checkpoint, and retry the window`,
    };
  }
  const failed = pages.findIndex((page) => !page.result.ok);
  if (failed !== -1) {
    return {
      ...from,
      would_commit: null,
      note: `page ${failed + 1} failed: a run would fail there and keep its checkpoint, and retry the window`,
    };
  }
  const after = isoTime(nextCheckpoint(start.at, window, lagAllowance));
  const read = complete
    ? 'the window was read to its end: a run that delivers these records commits this'
    : `the preview stopped after ${pages.length} page(s): a run reads the rest of the window, and commits this once all of it is delivered`;
  const more = window.cut
    ? '; max_window cut the window short of now: a run goes on with the next'
    : '';
  return { ...from, would_commit: after, note: `${read}${more}` };
}

/** A page's body as JSON, when it was read whole and is JSON. */
function parsed(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Where a preview's window starts: the time asked for; else (`checkpoint`, or an unsaved
 * config's default) the poller's checkpoint, its start_from, or PREVIEW_DEFAULT_SPAN_MS ago
 * (a poller's first run stores its T and reads nothing yet: a preview from there shows nothing).
 */
export function previewStart(
  asked: number | 'checkpoint',
  checkpoint: number | null,
  config: { start_from?: number | undefined },
  now: number,
): PreviewStart {
  if (asked !== 'checkpoint') return { at: asked, source: 'asked' };
  if (checkpoint !== null) return { at: checkpoint, source: 'checkpoint' };
  if (config.start_from !== undefined) return { at: config.start_from, source: 'start_from' };
  return { at: now - PREVIEW_DEFAULT_SPAN_MS, source: 'default' };
}
