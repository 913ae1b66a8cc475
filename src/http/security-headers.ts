import type { Context } from 'hono';
import { NONCE, secureHeaders } from 'hono/secure-headers';

/**
 * Security headers on every response, the dashboard and the API alike. The policy lets a
 * page load nothing but its own nonce-tagged <script> and <style> and talk only to this
 * origin: an injected tag or attribute (a poller name, an upstream error quoted in the
 * panel) cannot run, load or send anything. `frame-ancestors 'none'` (and X-Frame-Options
 * for old browsers) stops clickjacking of the admin buttons; `nosniff` keeps a JSON or
 * text answer from being read as script; `no-referrer` keeps URLs to ourselves.
 */
export const securityHeaders = () =>
  secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: [NONCE],
      styleSrc: [NONCE],
      connectSrc: ["'self'"],
      baseUri: ["'none'"],
      // The token form is handled by script; it must never submit (and put the token in a URL).
      formAction: ["'none'"],
      frameAncestors: ["'none'"],
    },
    xFrameOptions: 'DENY',
    xContentTypeOptions: true,
    referrerPolicy: 'no-referrer',
    // No includeSubDomains: one Worker should not set HTTPS policy for its sibling hosts.
    strictTransportSecurity: 'max-age=15552000',
  });

/** This response's CSP nonce, for the `nonce` attribute of a page's inline script and style. */
export function cspNonce(c: Context): string {
  const nonce = c.get('secureHeadersNonce');
  if (nonce === undefined) throw new Error('securityHeaders() must run before the page renders');
  return nonce;
}
