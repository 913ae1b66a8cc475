import { html } from 'hono/html';

/** How much of an error a table shows before it is cut: about two lines of a run's row. */
export const ERROR_CUT = 160;

/**
 * Percent-encoded runs (a URL's `since=2026-01-01T00%3A00%3A00Z`) decoded, for display only:
 * the error stays as stored in the run history and the API. A run that is not valid UTF-8
 * stays as it is.
 */
export function decodedForDisplay(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/**
 * An error as the dashboard shows it: decoded, and when longer than ERROR_CUT, cut at a space
 * with the whole text a click away (a `<details>`: no script, so the page's CSP allows it;
 * `keep` names it, so that a refresh of the panel leaves it open).
 */
export function errorText(error: string, keep: string) {
  const text = decodedForDisplay(error);
  if (text.length <= ERROR_CUT) return html`<span class="error-text">${text}</span>`;
  const space = text.lastIndexOf(' ', ERROR_CUT);
  const cut = text.slice(0, space > ERROR_CUT / 2 ? space : ERROR_CUT);
  return html`<details class="error-text" data-keep="${keep}"><summary><span class="cut">${cut} …</span>
    <span class="more">(all ${text.length} characters)</span><span class="less">(fold)</span></summary>
    <p class="full">${text}</p></details>`;
}
