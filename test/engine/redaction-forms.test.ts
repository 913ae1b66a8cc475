import { describe, expect, it } from 'vitest';
import { redact } from '../../src/config/interpolate.ts';

/**
 * A secret is redacted in every form text can hold it in: as written, URL-encoded, and inside
 * a JSON string as JavaScript or PHP's json_encode wrote it.
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
});
