import { html } from 'hono/html';
import { staticConfig } from '../../catalog.ts';

/**
 * A poller's config as written, with `${NAME}` where a secret goes: a static poller's from
 * POLLERS, a runtime poller's as it was PUT (kept so in the registry). Both are read before
 * interpolation, so no secret value can be in them.
 */
export interface ConfigAsWritten {
  kind: 'static' | 'runtime';
  /** Pretty-printed JSON. */
  text: string;
  /** A runtime poller's config version (each PUT adds one). */
  version: number | null;
}

/** A static poller's config as written in POLLERS, or null when it is not there. */
export function configTemplate(env: Env, name: string): string | null {
  const declared = staticConfig(env, name);
  if (declared === undefined) return null;
  return JSON.stringify(declared, null, 2) ?? null;
}

/** The config block of the poller page. */
export function configView(config: ConfigAsWritten) {
  const where =
    config.kind === 'static'
      ? html`As written in POLLERS`
      : html`As written with <code>PUT /pollers/:name</code> (version ${config.version})`;
  return html`<p class="muted">${where}: secrets appear as their <code>\${NAME}</code>, never their
    value. Defaults are not shown.</p>
    <pre class="config">${config.text}</pre>`;
}
