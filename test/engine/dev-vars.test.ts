import { describe, expect, it } from 'vitest';
import example from '../../.dev.vars.example?raw';
import { fillDevVars, missingDevVars, parseDevVars } from '../../scripts/dev-vars.ts';
import { signingSecretProblem } from '../../src/delivery/standard-webhooks.ts';
import { SecretsKey } from '../../src/secrets/index.ts';

const COMMITTED_WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('npm start: .dev.vars from .dev.vars.example', () => {
  it('gives WEBHOOK_SECRET a fresh signing secret of at least 24 bytes, never a committed value', () => {
    const first = parseDevVars(fillDevVars(example)).WEBHOOK_SECRET ?? '';
    const second = parseDevVars(fillDevVars(example)).WEBHOOK_SECRET ?? '';
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(signingSecretProblem(first)).toBeUndefined();
    expect(atob(first.slice('whsec_'.length)).length).toBeGreaterThanOrEqual(24);
    expect(example).not.toContain(first);
    expect(second).not.toBe(first);
  });

  it('gives every token a fresh random value', () => {
    const vars = parseDevVars(fillDevVars(example));
    expect(vars.ADMIN_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.STATUS_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.ADMIN_TOKEN).not.toBe(vars.STATUS_TOKEN);
  });

  it('keeps comment lines as written, even where they mention the placeholders', () => {
    const comments = (text: string) => text.split('\n').filter((line) => line.startsWith('#'));
    expect(comments(example).join('\n')).toContain('change-me');
    expect(comments(fillDevVars(example))).toEqual(comments(example));
  });

  it('an existing .dev.vars keeps its own values but loses the once-committed webhook secret', () => {
    const existing = `ADMIN_TOKEN=mine\nWEBHOOK_SECRET=${COMMITTED_WEBHOOK_SECRET}\nSTATUS_TOKEN=change-me\n`;
    const vars = parseDevVars(fillDevVars(existing));
    expect(vars.ADMIN_TOKEN).toBe('mine');
    expect(vars.STATUS_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.WEBHOOK_SECRET).not.toBe(COMMITTED_WEBHOOK_SECRET);
    expect(signingSecretProblem(vars.WEBHOOK_SECRET ?? '')).toBeUndefined();
  });
});

describe('npm start: SECRETS_KEY and the demo OAuth client in .dev.vars', () => {
  it('gives SECRETS_KEY a fresh key, base64 of 32 random bytes, that SecretsKey accepts', () => {
    const first = parseDevVars(fillDevVars(example)).SECRETS_KEY ?? '';
    const second = parseDevVars(fillDevVars(example)).SECRETS_KEY ?? '';
    expect(first).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(atob(first).length).toBe(32);
    expect(() => new SecretsKey(first)).not.toThrow();
    expect(example).not.toContain(first);
    expect(second).not.toBe(first);
  });

  it('gives the demo OAuth client secret and first refresh token fresh random values', () => {
    const vars = parseDevVars(fillDevVars(example));
    expect(vars.DEMO_CLIENT_SECRET).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.DEMO_REFRESH_TOKEN).toMatch(/^[0-9a-f]{32}$/);
    expect(vars.DEMO_CLIENT_SECRET).not.toBe(vars.DEMO_REFRESH_TOKEN);
    expect(vars.DEMO_OAUTH).toBeUndefined(); // the flag is off unless asked for
  });

  it('appends what an older .dev.vars lacks, with its comment, and changes none of its lines', () => {
    const older = 'ADMIN_TOKEN=mine\nSTATUS_TOKEN=also-mine\nWEBHOOK_SECRET=whsec_bWluZQ==';
    const missing = missingDevVars(older, example);
    expect(missing.names).toEqual(['SECRETS_KEY', 'DEMO_CLIENT_SECRET', 'DEMO_REFRESH_TOKEN']);
    expect(missing.lines).toContain('# Seals per-poller secrets');
    const vars = parseDevVars(`${older}\n${missing.lines}`);
    expect(vars).toMatchObject({
      ADMIN_TOKEN: 'mine',
      STATUS_TOKEN: 'also-mine',
      WEBHOOK_SECRET: 'whsec_bWluZQ==',
    });
    expect(() => new SecretsKey(vars.SECRETS_KEY)).not.toThrow();
    expect(vars.DEMO_REFRESH_TOKEN).toMatch(/^[0-9a-f]{32}$/);
  });

  it('keeps an existing SECRETS_KEY as it is, and appends nothing to a complete .dev.vars', () => {
    const complete = fillDevVars(example);
    expect(missingDevVars(complete, example)).toEqual({ names: [], lines: '' });
    const own = complete.replace(
      /^SECRETS_KEY=.*$/m,
      'SECRETS_KEY=my-own-key-that-is-long-enough-0123456789',
    );
    expect(fillDevVars(own)).toBe(own);
    expect(missingDevVars(own, example).names).toEqual([]);
  });
});
