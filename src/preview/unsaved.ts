import type { FleetPolicy } from '../config/fleet-policy.ts';
import { type LoadOptions, loadPoller } from '../config/load.ts';
import { runtimeLoadOptions, runtimeScope } from '../config/runtime-poller.ts';
import { MemoryStore } from '../engine/memory-store.ts';
import { envValues } from '../env-values.ts';
import { wireLoaded } from '../poller/wiring.ts';
import { MemoryVault } from './memory-vault.ts';
import { type PreviewLimits, type PreviewResult, previewStart, previewWindow } from './preview.ts';
import { RequestLog } from './request-log.ts';

/** A preview of a config not stored anywhere, or why it was refused (nothing was sent then). */
export type UnsavedPreview =
  | { ok: true; preview: PreviewResult }
  | { ok: false; status: 400 | 422; body: { error: string; errors?: string[] } };

/** What a preview of an unsaved config asks: its name-to-be, where to start, how much. */
export interface UnsavedAsk extends PreviewLimits {
  name: string;
  /** Epoch ms; null: start_from, else a day ago. */
  from: number | null;
}

/**
 * POST /pollers/preview: a config that no poller has yet, read as PUT /pollers/:name reads a
 * runtime config (under FLEET_POLICY: the Worker vars it lists, the hosts, bindings, caps and
 * the private-address rule, every error at once), then one window read in this Worker's own
 * invocation. It has no object, so no state: no lease (no run of it can exist), its storage a
 * scratch one in memory, dropped with the answer. A refresh_token grant is refused before
 * anything is sent: the provider may rotate the refresh token, retiring the configured one,
 * and a token with nowhere durable to go would be lost (R17). The audit line goes where the
 * fleet's own (poller.deleted) goes: the Worker's log.
 */
export async function previewUnsaved(
  env: Env,
  policy: FleetPolicy,
  raw: unknown,
  ask: UnsavedAsk,
): Promise<UnsavedPreview> {
  const { name } = ask;
  if (rotatesRefreshToken(raw)) {
    return {
      ok: false,
      status: 422,
      body: {
        error: `source.auth: an oauth2 refresh_token grant is not previewed unsaved: the provider may rotate the refresh token, and the new one would have nowhere to be kept. Create the poller paused (PUT /pollers/${name}, then POST /pollers/${name}/pause, or "enabled = false"), set its secrets, and preview it by name: POST /pollers/${name}/preview`,
      },
    };
  }
  const entry = loadPoller(
    name,
    raw,
    runtimeScope(envValues(env), {}, policy),
    unsavedOptions(name, policy),
  );
  if (!entry.ok) {
    return {
      ok: false,
      status: 400,
      body: { error: 'invalid poller config', errors: entry.errors },
    };
  }
  const log = new RequestLog(() => Date.now());
  const vault = new MemoryVault();
  const wiring = wireLoaded(name, env, new MemoryStore(), { entry, declared: false }, undefined, {
    tap: log.tap,
    nextPaths: { saw: () => {} },
    vault: () => vault,
  });
  if (!wiring.ok) {
    return {
      ok: false,
      status: 400,
      body: { error: 'invalid poller config', errors: wiring.errors },
    };
  }
  const { context } = wiring;
  log.keep = context.config.source.max_body;
  const now = Date.now();
  const start = previewStart(ask.from ?? 'checkpoint', null, context.config, now);
  const preview = await previewWindow({ context, log, start, limits: ask });
  const detail = {
    unsaved: true,
    from: preview.checkpoint.from,
    pages: preview.pages,
    records: preview.records.length,
    requests: preview.requests.length,
    warnings: [...new Set(preview.warnings.map((warning) => warning.kind))],
  };
  console.log(JSON.stringify({ event: 'admin', poller: name, action: 'preview', detail }));
  return { ok: true, preview };
}

/**
 * A runtime config's reading (FLEET_POLICY), with the hint an unsaved config needs for a
 * `${NAME}` that is not set: it has no secrets of its own to set one in.
 */
function unsavedOptions(name: string, policy: FleetPolicy): LoadOptions {
  return {
    ...runtimeLoadOptions(name, policy),
    unsetHint: (secret) =>
      `an unsaved config reads only the Worker vars and secrets FLEET_POLICY.env lists: to use a secret of the poller's own, create the poller paused, set it (PUT /pollers/${name}/secrets/${secret}) and preview it by name`,
  };
}

/** Whether the config as written asks for source.auth's refresh_token grant (oauth2's default). */
function rotatesRefreshToken(raw: unknown): boolean {
  const auth = at(at(raw, 'source'), 'auth');
  if (at(auth, 'type') !== 'oauth2') return false;
  const grant = at(auth, 'grant');
  return grant === undefined || grant === 'refresh_token';
}

function at(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? Reflect.get(value, key) : undefined;
}
