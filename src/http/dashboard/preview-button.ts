import { html } from 'hono/html';

/**
 * The poller page's Preview button: reads one window as a run would and shows the answer
 * below the panel (client-preview.ts), delivering and storing nothing. ADMIN_TOKEN only: a
 * read-only token gets the API's 403, said in words.
 */
export function previewButton(name: string) {
  return html`<button type="button" data-action="preview" data-poller="${name}" title="Read one window as a run would: nothing is delivered or stored">Preview</button>`;
}
