import type { Sender } from '../delivery/index.ts';
import { isoTime } from '../engine/iso-time.ts';
import type { PollerEngine } from '../engine/poller.ts';
import { previewStart, previewWindow } from '../preview/preview.ts';
import { RequestLog } from '../preview/request-log.ts';
import { audit } from './admin.ts';
import type { PreviewAsk, PreviewReply } from './rpc.ts';
import type { SqliteStore } from './store/index.ts';
import { type PollerSecretSet, wirePoller } from './wiring.ts';

/** What a poller's object lends its preview. */
export interface PreviewHost {
  name: string;
  env: Env;
  store: SqliteStore;
  /** The poller's config as the object keeps it (a runtime poller's), or undefined. */
  runtime: unknown;
  own: PollerSecretSet;
  sender: Sender;
  /** The poller's engine, for its alarm only (set from storage). */
  engine: PollerEngine;
}

/** The next-page paths a preview's pages show are its own warnings: the poller's memo is not written. */
const NOT_KEPT = { saw: () => {} };

/**
 * POST /pollers/:name/preview, in the poller's object: its config and own secrets wired as a
 * run's, each request recorded, one window read under the poller's lease (a preview never
 * overlaps a run: R4) with the alarm at the lease's expiry meanwhile (R5). Nothing is
 * delivered, and nothing written but the lease, one audit line and, as in a run, an OAuth
 * token renewed on the way (R17: a rotated refresh token must be kept).
 */
export async function previewPoller(host: PreviewHost, ask: PreviewAsk): Promise<PreviewReply> {
  const { name, store } = host;
  const log = new RequestLog(() => Date.now());
  const wiring = wirePoller(name, host.env, store, host.runtime, host.own, host.sender, {
    tap: log.tap,
    nextPaths: NOT_KEPT,
  });
  if (!wiring.ok) return { outcome: 'misconfigured', errors: wiring.errors };
  const { context } = wiring;
  const { config } = context;
  log.keep = config.source.max_body;
  // Taken with no await since the check: no run can start between them.
  const state = store.read();
  const now = Date.now();
  if (state.rateLimitedUntil !== null && state.rateLimitedUntil > now) {
    // As a run asked for now, it waits for the upstream's own "not before" (R12).
    const at = isoTime(state.rateLimitedUntil);
    return {
      outcome: 'busy',
      error: `the upstream asked for no request before ${at} (rate limit): try again then`,
    };
  }
  const epoch = state.lease.held
    ? null
    : store.holdAside('preview', state.lease.epoch, now, now + config.lease_ttl);
  if (epoch === null) {
    return {
      outcome: 'busy',
      error: 'a run or a dead-letter replay holds the lease; try again when it has finished',
    };
  }
  const start = previewStart(ask.from, state.checkpoint, config, now);
  try {
    await host.engine.rearm();
    const preview = await previewWindow({
      context,
      log,
      start,
      limits: ask,
      mayGo: () => store.holds(epoch),
    });
    audit(store, name, 'preview', auditDetail(preview), Date.now());
    return { outcome: 'previewed', preview };
  } finally {
    store.releaseAside(epoch);
    // What comes next, from storage: a paused poller's alarm stays off.
    await host.engine.ensureScheduled();
  }
}

/** The audit line of a preview: what it asked for and found, no record. */
export function auditDetail(preview: Awaited<ReturnType<typeof previewWindow>>) {
  return {
    from: preview.checkpoint.from,
    from_source: preview.checkpoint.from_source,
    pages: preview.pages,
    records: preview.records.length,
    requests: preview.requests.length,
    complete: preview.complete,
    warnings: [...new Set(preview.warnings.map((warning) => warning.kind))],
  };
}
