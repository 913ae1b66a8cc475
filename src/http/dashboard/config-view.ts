import { html } from 'hono/html';
import { readPollersTable } from '../../config/load.ts';

/**
 * A poller's config as written in POLLERS: the template, with `${NAME}` where a secret goes.
 * It is read before interpolation, so no secret value can be in it.
 */
export function configTemplate(env: Env, name: string): string | null {
  const table = readPollersTable((env as unknown as Record<string, unknown>).POLLERS);
  if (!table.ok || !(name in table.pollers)) return null;
  return JSON.stringify(table.pollers[name], null, 2) ?? null;
}

/** The config block of the poller page. */
export function configView(template: string | null) {
  if (template === null) return html`<p class="muted">Not in POLLERS.</p>`;
  return html`<p class="muted">As written in POLLERS: secrets appear as their <code>\${NAME}</code>,
    never their value. Defaults are not shown.</p>
    <pre class="config">${template}</pre>`;
}
