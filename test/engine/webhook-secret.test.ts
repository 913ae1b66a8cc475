import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { createDeliverer } from '../../src/delivery/index.ts';

/** 24 and 23 bytes of key, base64 (32 and 32 characters: 23 bytes pad to 24 with "="). */
const KEY_24_BYTES = `whsec_${btoa('k'.repeat(24))}`;
const KEY_23_BYTES = `whsec_${btoa('k'.repeat(23))}`;

/** What a webhook poller whose WEBHOOK_SECRET is `secret` gets: a deliverer, or its config error. */
function deliveryWith(secret: string): { ok: true } | { ok: false; error: string } {
  const entry = loadPoller(
    'sessions',
    {
      cron: '*/5 * * * *',
      source: { url: 'https://api.example.com/v1/sessions', from_param: 'since' },
      deliver: { type: 'webhook', url: 'https://example.com/hooks', secret: '${WEBHOOK_SECRET}' },
    },
    { WEBHOOK_SECRET: secret },
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const delivery = createDeliverer(
    'sessions',
    entry.config.deliver,
    {} as Env,
    () => Promise.reject(new Error('no network in this test')),
    entry.secrets,
    () => 0,
  );
  return delivery.ok ? { ok: true } : delivery;
}

describe('webhook signing secrets', () => {
  it('refuses whsec_AA== (one byte of key) with an error naming deliver.secret and the 24-byte minimum', () => {
    const delivery = deliveryWith('whsec_AA==');
    expect(delivery.ok).toBe(false);
    if (delivery.ok) return;
    expect(delivery.error).toMatch(/^deliver\.secret: /);
    expect(delivery.error).toContain('at least 24 random bytes');
    expect(delivery.error).not.toContain('AA==');
  });

  it('refuses 23 bytes of key and accepts 24', () => {
    const short = deliveryWith(KEY_23_BYTES);
    expect(short.ok).toBe(false);
    if (!short.ok) expect(short.error).not.toContain(KEY_23_BYTES.slice('whsec_'.length));
    expect(deliveryWith(KEY_24_BYTES)).toEqual({ ok: true });
  });

  it('counts the decoded bytes, not the characters: 24 characters of base64 are only 18 bytes', () => {
    expect(deliveryWith(`whsec_${'A'.repeat(24)}`).ok).toBe(false);
  });

  it('still refuses a secret that is not base64, without quoting it', () => {
    const delivery = deliveryWith('whsec_not base64!');
    expect(delivery).toEqual({
      ok: false,
      error: 'deliver.secret: not a Standard Webhooks secret ("whsec_" + base64)',
    });
  });
});
