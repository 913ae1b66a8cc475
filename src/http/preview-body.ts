import * as z from 'zod';
import { readFleetPolicy } from '../config/fleet-policy.ts';
import { takeKeepSecrets } from '../config/origin-change.ts';
import { PREVIEW_PAGES, PREVIEW_RECORDS } from '../preview/preview.ts';
import type { UnsavedAsk } from '../preview/unsaved.ts';
import { issueLines } from './issue-lines.ts';
import { readCappedText } from './read-capped.ts';

const isoTime = z.iso.datetime({
  offset: true,
  message: 'must be an ISO 8601 time, e.g. "2026-01-01T00:00:00Z"',
});

const limits = {
  /** Pages read at most (default 3, at most 20). */
  pages: z.int().min(1).max(PREVIEW_PAGES.max).default(PREVIEW_PAGES.default),
  /** Records shown at most; no page is asked for once this many were read (default 20). */
  records: z.int().min(1).max(PREVIEW_RECORDS.max).default(PREVIEW_RECORDS.default),
};

/** POST /pollers/:name/preview: where to start (a time, or the poller's checkpoint) and how much. */
export const namedPreviewBody = z.strictObject({
  from: z.union([z.literal('checkpoint'), isoTime]).default('checkpoint'),
  ...limits,
});

/** POST /pollers/preview: a config as PUT /pollers/:name takes it, and the same options. */
export const unsavedPreviewBody = z.strictObject({
  config: z.record(z.string(), z.unknown()),
  /** The name it would be created under: errors name it, deliver.name defaults to it. */
  name: z.string().default('preview'),
  /** Where the window starts (default the config's start_from, else a day ago). */
  from: isoTime.optional(),
  ...limits,
});

/** Room beside the config in a preview's body: its name, from, pages and records. */
const ENVELOPE_BYTES = 1024;

/** An unsaved config's preview, admitted: its policy, its config as written, what it asks. */
export type AdmittedPreview =
  | {
      ok: true;
      policy: ReturnType<typeof readFleetPolicy> & { ok: true };
      raw: unknown;
      ask: UnsavedAsk;
    }
  | { ok: false; status: 400 | 413 | 500; body: { error: string } };

/**
 * Reads POST /pollers/preview's body as PUT reads a runtime config's: an invalid FLEET_POLICY
 * refuses it (fail closed), a config larger than max_config_bytes is a 413, and the body
 * must be JSON of the right shape. `keep_secrets`, which a PUT body may carry, is set aside.
 */
export async function admitPreview(env: Env, request: Request): Promise<AdmittedPreview> {
  const policy = readFleetPolicy(env.FLEET_POLICY);
  if (!policy.ok) return { ok: false, status: 500, body: { error: policy.error } };
  const max = policy.policy.max_config_bytes;
  const tooBig = {
    ok: false as const,
    status: 413 as const,
    body: { error: `a poller's config is at most ${max} bytes (FLEET_POLICY.max_config_bytes)` },
  };
  const read = await readCappedText(request, max + ENVELOPE_BYTES);
  if (!read.ok) return tooBig;
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return { ok: false, status: 400, body: { error: 'the body must be JSON: { "config": {…} }' } };
  }
  const parsed = unsavedPreviewBody.safeParse(body);
  if (!parsed.success)
    return { ok: false, status: 400, body: { error: issueLines(parsed.error, 'body') } };
  const { config, name, from, pages, records } = parsed.data;
  const taken = takeKeepSecrets(config);
  if (!taken.ok) return { ok: false, status: 400, body: { error: `config: ${taken.error}` } };
  if (new TextEncoder().encode(JSON.stringify(taken.config)).byteLength > max) return tooBig;
  const ask = { name, from: from === undefined ? null : Date.parse(from), pages, records };
  return { ok: true, policy, raw: taken.config, ask };
}
