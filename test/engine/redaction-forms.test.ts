import { describe, expect, it } from 'vitest';
import { redact } from '../../src/config/interpolate.ts';

/**
 * A secret is redacted in every form text can hold it in: as written, URL-encoded as
 * encodeURIComponent, a query string or the URL parser wrote it, and inside a JSON string as
 * JavaScript or PHP's json_encode wrote it.
 */

/**
 * `value` as a JSON string, as PHP's json_encode writes it (`\/`, and `\uXXXX` in lower
 * case hex), or with upper case hex as other encoders do.
 */
function phpJson(value: string, upper = false): string {
  const hex = (char: string) => char.charCodeAt(0).toString(16).padStart(4, '0');
  return JSON.stringify(value)
    .replace(/[^\x20-\x7e]/g, (char) => `\\u${upper ? hex(char).toUpperCase() : hex(char)}`)
    .replaceAll('/', '\\/');
}

describe('redacting a secret', () => {
  it('hides a key with slashes as json_encode escapes them', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY';
    expect(phpJson(secret)).toBe('"wJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCY"');
    expect(redact(`{"error":"bad key","key":${phpJson(secret)}}`, [secret])).toBe(
      '{"error":"bad key","key":"***"}',
    );
  });

  it('hides a key with non-ASCII letters as JSON writes them in \\u escapes, either case', () => {
    const secret = 'pässwörd-ключ/9';
    const lower = phpJson(secret);
    expect(lower).toContain('\\u00e4');
    expect(redact(`echo ${lower}`, [secret])).toBe('echo "***"');
    const upper = phpJson(secret, true);
    expect(upper).toContain('\\u00E4');
    expect(redact(`echo ${upper}`, [secret])).toBe('echo "***"');
  });

  it('hides a key as the URL parser writes it in a path or a query, which encodes { } but not |', () => {
    const secret = 'p4ss{w0rd}|xyz';
    const path = new URL(`https://api.example.com/k/${secret}/deleted`).href;
    expect(path).toBe('https://api.example.com/k/p4ss%7Bw0rd%7D|xyz/deleted');
    expect(redact(`GET ${path}: HTTP 500`, [secret])).toBe(
      'GET https://api.example.com/k/***/deleted: HTTP 500',
    );
    const query = new URL(`https://api.example.com/x?key=${secret} ^"`).href;
    expect(redact(query, [`${secret} ^"`])).toBe('https://api.example.com/x?key=***');
  });

  it('leaves text alone that only a URL-normalised, shorter form of the secret would match', () => {
    expect(redact('see ../x and x', ['../x'])).toBe('see *** and x');
    expect(redact('a=1&b=2', ['a=1?&b'])).toBe('a=1&b=2');
  });
});
